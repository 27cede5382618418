// samples/echo_worker as N processes on one queue of a cluster: worker i is
// given every node's URL, node (i mod nodes) + 1's first, so the workers
// spread over the nodes and each fails over to the others. One thread per
// worker reads its stdout as it comes (a worker never waits on a full
// pipe); the lines are parsed once the workers stopped. Workers are
// signalled by their pid only, and killed when the fleet goes (on a failure
// too) or on SIGINT / SIGTERM (cleanup_on_signal.hpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cbench {

/// One job event a worker printed (run, succeeded, ...).
struct worker_event {
    std::string what;
    std::string id;
    std::int64_t due_us = -1;  ///< microseconds since the epoch
    std::int64_t at_us = -1;
    std::size_t worker = 0;    ///< which worker printed it (0-based)
};

class echo_worker_fleet {
public:
    /// Starts `n` workers of `program` on `queue`, each with the URLs of
    /// `node_urls` (rotated) and then `extra` on its command line.
    echo_worker_fleet(const std::string& program, const std::vector<std::string>& node_urls,
                      const std::string& queue, std::size_t n, const std::vector<std::string>& extra);
    /// Kills (SIGKILL) the workers still running and reaps them.
    ~echo_worker_fleet();
    echo_worker_fleet(const echo_worker_fleet&) = delete;
    echo_worker_fleet& operator=(const echo_worker_fleet&) = delete;

    /// Whether every worker printed "ready" within `t`.
    bool wait_ready(std::chrono::milliseconds t);
    /// Whether the workers printed `n` "succeeded" events, together, within `t`.
    bool wait_succeeded(std::size_t n, std::chrono::milliseconds t);
    /// SIGTERM to each (a graceful shutdown), then waits at most `t` for
    /// all to exit (then SIGKILL); whether every one exited 0.
    bool stop(std::chrono::milliseconds t);

    /// After stop(): every job event printed, in each worker's order.
    std::vector<worker_event> events() const;
    /// After stop(): what the workers wrote to stderr, for a failure.
    std::string stderr_text();

private:
    struct worker;
    void kill_all();
    void join_readers();

    std::vector<std::unique_ptr<worker>> workers_;
    std::size_t cleanup_key_ = 0;
};

}  // namespace cbench
