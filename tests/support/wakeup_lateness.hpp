// How late this machine wakes a sleeping thread right now: the baseline a
// lateness bound is measured against, in the same run (a loaded 2-core CI
// machine wakes everything late, tarry's timers included).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <thread>
#include <vector>

namespace tarry_test {

/// A thread that sleeps until each `period` mark of the system clock (the
/// multiples of `period` since the epoch, as an every-`period` schedule's
/// occurrences) and records how late it woke, in microseconds, until
/// `stop()`. Not copyable; the destructor stops it.
class wakeup_lateness_probe {
public:
    explicit wakeup_lateness_probe(std::chrono::milliseconds period = std::chrono::milliseconds(100))
        : thread_([this, period] {
              using clock = std::chrono::system_clock;
              const auto p = std::chrono::duration_cast<clock::duration>(period);
              auto next = clock::time_point((clock::now().time_since_epoch() / p + 1) * p);
              while (!stopping_.load()) {
                  std::this_thread::sleep_until(next);
                  const auto late = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - next);
                  by_mark_.emplace(std::chrono::duration_cast<std::chrono::microseconds>(next.time_since_epoch()).count(),
                                   late.count());
                  next += p;
              }
          }) {}
    wakeup_lateness_probe(const wakeup_lateness_probe&) = delete;
    wakeup_lateness_probe& operator=(const wakeup_lateness_probe&) = delete;
    ~wakeup_lateness_probe() { stop(); }

    /// Stops the thread; the lateness samples, sorted ascending.
    std::vector<std::int64_t> stop() {
        stopping_.store(true);
        if (thread_.joinable()) thread_.join();
        std::vector<std::int64_t> sorted;
        for (const auto& [mark, late] : by_mark_) sorted.push_back(late);
        std::sort(sorted.begin(), sorted.end());
        return sorted;
    }
    /// After stop(): how late the thread woke at the mark `mark_us` (µs
    /// since the epoch); 0 when it did not wake there.
    std::int64_t lateness_at(std::int64_t mark_us) const {
        const auto it = by_mark_.find(mark_us);
        return it == by_mark_.end() ? 0 : it->second;
    }

private:
    std::atomic<bool> stopping_{false};
    std::map<std::int64_t, std::int64_t> by_mark_;  // mark -> lateness, µs
    std::thread thread_;
};

/// The nearest-rank `pct` percentile of sorted `v` (0 when empty).
inline std::int64_t percentile_of_sorted(const std::vector<std::int64_t>& v, std::size_t pct) {
    return v.empty() ? 0 : v[std::min(v.size() - 1, v.size() * pct / 100)];
}

}  // namespace tarry_test
