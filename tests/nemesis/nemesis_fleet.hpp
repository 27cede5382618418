// The nemesis run's workers: echo_worker processes whose stdout goes, line
// by line as it comes, to DIR/worker-N.jsonl (each restart appended: the
// checker's worker streams) and whose stderr goes to DIR/worker-N.err. A
// pump thread reads them all; it also notes when each worker said
// "connection lost" and "connection consuming" (the fault log's
// consumed=), and which jobs ended (succeeded or dead-lettered), so that
// the run knows when everything it published has been settled.
// Thread-safe: the nemesis kills and restarts workers while the pump reads.
// Children are signalled by their own pid only.
#pragma once

#include "process.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

namespace nemesis {

class worker_fleet {
public:
    /// Worker n (from 1) runs argvs[n - 1]; its files go to `dir`.
    worker_fleet(std::vector<std::vector<std::string>> argvs, const std::string& dir);
    ~worker_fleet();
    worker_fleet(const worker_fleet&) = delete;
    worker_fleet& operator=(const worker_fleet&) = delete;

    /// Starts every worker and the pump.
    void start();
    /// Whether every worker said "connection consuming" within `t`.
    bool wait_consuming(std::chrono::milliseconds t) const;
    unsigned size() const noexcept { return static_cast<unsigned>(slots_.size()); }

    /// Worker n killed with SIGKILL; returns once it was reaped and all it
    /// printed is in its files.
    void kill(unsigned n);
    /// Worker n started again (a new life appended to its stream).
    void restart(unsigned n);

    /// When worker n first said "connection consuming" after `since` (epoch
    /// µs), if it did.
    std::optional<std::int64_t> consuming_after(unsigned n, std::int64_t since) const;
    /// When worker n first said "connection lost" within [from, to], if it did.
    std::optional<std::int64_t> lost_within(unsigned n, std::int64_t from, std::int64_t to) const;

    /// How many of `ids` no worker has yet reported succeeded or dead.
    std::size_t not_ended(const std::vector<std::string>& ids) const;
    /// Run events printed so far, by every worker.
    std::uint64_t runs() const noexcept { return runs_.load(); }
    /// Lives started so far (restarts included).
    std::uint64_t lives() const noexcept { return lives_.load(); }

    /// SIGTERM to every worker, then up to `grace` for each to exit (SIGKILL
    /// after); the pump stops and the files are closed. Each worker's exit
    /// status (128 + N for a signal; nothing when it had to be killed).
    std::vector<std::optional<int>> stop(std::chrono::milliseconds grace);

private:
    struct slot {
        std::vector<std::string> argv;
        mutable std::mutex m;
        std::unique_ptr<tarry_test::child_process> p;
        std::ofstream out, err;
        std::size_t err_taken = 0;          // of the current life's stderr
        std::vector<std::int64_t> consuming, lost;  // epoch µs
    };
    void pump_loop();
    // With s.m held: every complete line the current life printed so far.
    void pump_locked(slot& s, bool to_the_end);
    void take_line(slot& s, const std::string& line);

    std::vector<std::unique_ptr<slot>> slots_;
    std::atomic<bool> pumping_{false};
    std::thread pump_;
    mutable std::mutex ended_mutex_;
    std::unordered_set<std::string> ended_;
    std::atomic<std::uint64_t> runs_{0}, lives_{0};
};

}  // namespace nemesis
