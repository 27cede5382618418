// The nemesis itself: a thread that starts a random fault every 10 to 30 s
// (seeded), each on a thread of its own, so that faults overlap: a worker
// killed with SIGKILL (restarted after up to 10 s), a node killed (SIGKILL,
// restarted after 5 to 20 s), a node cut off from the other two (half the
// time from the clients too), a node paused (SIGSTOP) for 3 to 40 s, a
// worker's connections closed by the broker (rabbitmqctl close_connection),
// a worker's wall clock stepped 2 to 8 s ahead or behind for 10 to 40 s
// (libfaketime's timestamp file; only when the workers run under it). One
// node fault at a time (scripts/cluster heal heals every cut at once) and
// one fault at a time on each worker; any worker's fault overlaps any
// other fault. Each is healed within 60 s and written to the fault log
// (nemesis_input.hpp's format) once healed, with consumed= for every
// worker that consumed again after losing its connection to it (within 60 s
// of the heal; for a node's fault, a loss from its start to 5 s after its
// heal that no cut of the worker's connections explains).
#pragma once

#include "nemesis_fleet.hpp"
#include "nemesis_records.hpp"
#include "private_cluster.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace nemesis {

struct nemesis_options {
    std::uint64_t seed = 1;
    std::chrono::milliseconds min_gap{10'000}, max_gap{30'000};  ///< between two faults' starts
    /// Worker n's libfaketime timestamp file is clock_files[n - 1]; empty:
    /// no clock steps.
    std::vector<std::string> clock_files;
    /// Where progress lines go ("nemesis: ...").
    std::function<void(const std::string&)> say;
};

class fault_injector {
public:
    fault_injector(tarry_test::private_cluster& cluster, worker_fleet& fleet, nemesis_options o,
                   const std::string& faults_path);
    ~fault_injector();
    fault_injector(const fault_injector&) = delete;
    fault_injector& operator=(const fault_injector&) = delete;

    void start();
    /// No new fault; every fault on is healed now; returns once each one's
    /// line is written (up to 60 s after its heal, for consumed=).
    void stop();

    /// Faults written to the log, by kind ("worker-kill", ...).
    std::map<std::string, unsigned> counts() const;
    /// Starts or heals that failed (each said as it happened).
    unsigned failures() const;

private:
    struct plan {
        fault_kind what;
        unsigned target;
        std::chrono::milliseconds hold;
        bool clients = false;    ///< partition --clients
        int step_s = 0;          ///< clock_step
    };
    void loop();
    bool pick(plan& p);
    void run(plan p);
    /// Waits up to `t`, less when stopping; whether it is stopping.
    bool wait_or_stop(std::chrono::milliseconds t);
    /// Closes every connection of worker n; how many.
    unsigned cut_connections(unsigned n, unsigned via_node);
    void write_clock(unsigned n, int step_s);
    /// Whether a cut of worker n's connections explains its loss at t.
    bool cut_then(unsigned n, micros t) const;
    void say(const std::string& line) const;

    tarry_test::private_cluster& cluster_;
    worker_fleet& fleet_;
    nemesis_options o_;
    std::mt19937_64 rng_;
    mutable std::mutex m_;
    std::condition_variable cv_;
    bool stopping_ = false;
    bool node_busy_ = false;
    unsigned faulted_node_ = 0;
    std::vector<bool> worker_busy_;
    struct cut {
        unsigned worker;
        micros start, end;
    };
    std::vector<cut> cuts_;
    std::ofstream log_;
    std::map<std::string, unsigned> counts_;
    unsigned failures_ = 0;
    std::thread loop_;
    std::vector<std::thread> faults_;
};

}  // namespace nemesis
