// The hand-off of lifecycle events (subscription_options::publish_events)
// from the threads that make them - workers and the I/O thread - to the one
// thread that publishes them: bounded, and never waits for room.
//
// offer() takes a copy of the event, or, when `capacity` events are waiting
// already, drops it and counts it; it holds a lock only to append. An event
// waits from offer() until the publisher settles it: published() once the
// connection has it, dropped() when it could not be published. take() hands
// the publisher every queued event, oldest first (the order of offer()s),
// waiting until there is one or the outbox is closed (and, when asked, a
// little longer, so that more events share a message). After close(), offer()
// drops and counts, and take() returns what is left, then nothing.
//
// Threads: offer() and the counters from any thread; take() from one
// thread; settled() from any.
#pragma once

#include "tarry/consumer/job_event.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace tarry::detail {

class event_outbox {
public:
    explicit event_outbox(std::size_t capacity) : capacity_(capacity) {}

    /// true: queued; false: dropped (counted), the outbox being full or closed.
    bool offer(const job_event& e);
    /// Every queued event, oldest first; waits until there is one, then
    /// `linger` more for others to join it (unless closed). Empty only once
    /// closed and drained.
    std::vector<job_event> take(std::chrono::milliseconds linger = {});
    void close();

    /// What became of `n` taken events: their places are free again.
    void settled(std::size_t n, bool published);

    std::uint64_t published() const noexcept { return published_.load(std::memory_order_relaxed); }
    std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
    /// Queued or taken and not yet settled.
    std::size_t waiting() const noexcept { return waiting_.load(std::memory_order_relaxed); }

private:
    const std::size_t capacity_;
    std::atomic<std::size_t> waiting_{0};
    std::atomic<std::uint64_t> published_{0};
    std::atomic<std::uint64_t> dropped_{0};
    std::mutex mutex_;
    std::condition_variable ready_;
    std::vector<job_event> queued_;  // guarded by mutex_
    bool closed_ = false;            // guarded by mutex_
    bool taker_waits_ = false;       // guarded by mutex_: take() sleeps on ready_
};

}  // namespace tarry::detail
