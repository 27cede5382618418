// How late this machine wakes a sleeping thread right now: the baseline a
// lateness bound is measured against, in the same run (a loaded 2-core CI
// machine wakes everything late, tarry's timers included).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace tarry_test {

/// A thread that sleeps until each `period` mark of the system clock and
/// records how late it woke, in microseconds, until `stop()`. Not copyable;
/// the destructor stops it.
class wakeup_lateness_probe {
public:
    explicit wakeup_lateness_probe(std::chrono::milliseconds period = std::chrono::milliseconds(100))
        : thread_([this, period] {
              using clock = std::chrono::system_clock;
              auto next = std::chrono::ceil<std::chrono::milliseconds>(clock::now()) + period;
              while (!stopping_.load()) {
                  std::this_thread::sleep_until(next);
                  samples_.push_back(std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - next).count());
                  next += period;
              }
          }) {}
    wakeup_lateness_probe(const wakeup_lateness_probe&) = delete;
    wakeup_lateness_probe& operator=(const wakeup_lateness_probe&) = delete;
    ~wakeup_lateness_probe() { stop(); }

    /// Stops the thread; the lateness samples, sorted ascending.
    std::vector<std::int64_t> stop() {
        stopping_.store(true);
        if (thread_.joinable()) thread_.join();
        std::sort(samples_.begin(), samples_.end());
        return samples_;
    }

private:
    std::atomic<bool> stopping_{false};
    std::vector<std::int64_t> samples_;
    std::thread thread_;
};

/// The nearest-rank `pct` percentile of sorted `v` (0 when empty).
inline std::int64_t percentile_of_sorted(const std::vector<std::int64_t>& v, std::size_t pct) {
    return v.empty() ? 0 : v[std::min(v.size() - 1, v.size() * pct / 100)];
}

}  // namespace tarry_test
