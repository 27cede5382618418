// SIGINT and SIGTERM for a benchmark that starts processes of its own (a
// cluster's nodes, workers): rather than die and leave them running, it runs
// the cleanups registered so far (kill the workers by pid, stop the cluster
// by its directory), then exits with 128 + the signal.
#pragma once

#include <cstddef>
#include <functional>

namespace cbench::on_signal {

/// Blocks SIGINT and SIGTERM in the calling thread and starts the thread
/// that waits for them. Call first in main(), before any other thread:
/// threads inherit the mask (child processes do not: process.hpp resets it).
void install();

/// Registers a cleanup; returns its key for forget().
std::size_t add(std::function<void()> cleanup);
/// Unregisters it; once this returns, it does not run and is not running.
void forget(std::size_t key);

/// While one exists, a signal's cleanups wait (e.g. until a cluster being
/// started can be stopped by its directory).
class deferred {
public:
    deferred();
    ~deferred();
    deferred(const deferred&) = delete;
    deferred& operator=(const deferred&) = delete;
};

}  // namespace cbench::on_signal
