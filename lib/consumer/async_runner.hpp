// The coroutines' side of the consumer: takes due jobs from the job store
// while fewer than max_in_flight run, spawns each one's handler on the
// handler executor, and hands its outcome back through worker_context
// (the same checks and bookkeeping as a worker thread's run). At stop(),
// once the grace is over, the coroutines still running are abandoned and
// cancelled (terminal); after let_go() none of them runs again.
//
// Threads: every member but in_flight() on the I/O executor. The handler
// and its coroutine run on the handler executor. Each coroutine co-owns
// the handler, its run and the worker_context, never the runner, so one
// abandoned at stop() may outlive the consumer.
#pragma once

#include "consumer_workers.hpp"

#include "tarry/consumer/async_job_handler.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>

namespace tarry::detail {

class async_runner : public std::enable_shared_from_this<async_runner> {
public:
    /// Where due jobs come from: the job store's side that workers use.
    struct source {
        /// The next due job, if one is due now (never blocks).
        std::function<std::optional<held_item>()> take_due;
        /// When the earliest job held falls due, if one is held.
        std::function<std::optional<steady_time>()> earliest_due;
        /// The store's clock.
        std::function<steady_time()> now;
    };

    /// `handler_executor` empty: `io`. `max_in_flight` at least 1.
    async_runner(boost::asio::any_io_executor io, boost::asio::any_io_executor handler_executor,
                 async_job_handler handler, std::shared_ptr<worker_context> context, std::size_t max_in_flight,
                 source from);

    /// Starts due jobs while fewer than max_in_flight run, and arms a timer
    /// for the next one to fall due.
    void pump();
    /// Starts no job from now on.
    void close();
    /// The grace is over: every coroutine still running is abandoned (its
    /// event now, its outcome discarded) and receives a terminal
    /// cancellation. Returns how many.
    std::size_t cancel_running(wall_time now);
    /// Abandoned coroutines are never resumed from now on (their frames are
    /// destroyed instead): the consumer is letting go of its executor.
    void let_go();
    /// Coroutines running (not yet abandoned); any thread.
    std::size_t in_flight() const noexcept { return in_flight_.load(std::memory_order_relaxed); }

private:
    struct flight {
        std::shared_ptr<boost::asio::cancellation_signal> signal;
        std::shared_ptr<std::atomic<bool>> gone;
    };
    void start(held_item& item);
    void landed(std::uint64_t id);
    void arm(std::optional<steady_time> at);

    const boost::asio::any_io_executor io_;
    const boost::asio::any_io_executor handler_executor_;
    const std::shared_ptr<const async_job_handler> handler_;
    const std::shared_ptr<worker_context> context_;
    const std::size_t max_in_flight_;
    const source from_;

    boost::asio::steady_timer timer_;
    std::optional<steady_time> timer_at_;
    std::uint64_t last_id_ = 0;
    std::map<std::uint64_t, flight> flights_;    // running, by id
    std::vector<std::shared_ptr<std::atomic<bool>>> abandoned_;  // let_go() sets them
    std::atomic<std::size_t> in_flight_{0};
    bool pumping_ = false;
    bool closed_ = false;
};

}  // namespace tarry::detail
