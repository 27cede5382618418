// worker_pool<T>: N threads that take due items from a delay_queue<T> and run
// a handler on each.
//
// Promises:
// - A job that throws never kills its thread: the exception is caught and
//   handed to the error handler with the item (nothing is swallowed silently;
//   should the error handler itself throw, that is counted in
//   stats().unreported).
// - stop(grace) is graceful: the queue is closed (no new items), running jobs
//   get until the grace period ends to finish, and every item that never
//   started - still queued, or taken by a worker that had not yet begun it -
//   is handed back to the caller.
// - The handlers run on the pool's threads, several at once; they must be
//   safe to call concurrently.
// - stop(), stats() and the destructor may be called from any thread except
//   a worker thread of this pool.
#pragma once

#include "tarry/schedule/clock.hpp"
#include "tarry/schedule/delay_queue.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace tarry {

/// A one-line description of an exception for a person: what() of a
/// std::exception, else "unknown exception". Empty pointer: "no exception".
std::string exception_text(const std::exception_ptr& e);

struct worker_pool_stats {
    std::size_t threads = 0;      ///< worker threads still taking or running jobs
    std::size_t running = 0;      ///< jobs running now
    std::uint64_t completed = 0;  ///< jobs that returned normally
    std::uint64_t failed = 0;     ///< jobs that threw (each reported to the error handler)
    std::uint64_t unreported = 0; ///< of those, reports where the error handler threw too
};

template <class T, clock_source Clock = steady_clock_source>
class worker_pool {
public:
    using queue_type = delay_queue<T, Clock>;
    using item = due_item<T>;
    /// Runs one job on a worker thread. May move from item.value.
    using job_handler = std::function<void(item&)>;
    /// Told of each exception a job threw, on the same worker thread, with
    /// the item (whose value the job may have moved from). Should not throw.
    using error_handler = std::function<void(item&, std::exception_ptr)>;

    /// What stop() hands back.
    struct stop_result {
        std::vector<item> not_started;  ///< in due order; the caller owns them now
        std::size_t still_running = 0;  ///< jobs that outlived the grace period
    };

    /// Starts `threads` workers on queue, which must outlive the pool. Throws
    /// std::invalid_argument if threads is 0 or a handler is empty, and
    /// std::system_error if a thread cannot start.
    worker_pool(queue_type& queue, std::size_t threads, job_handler run, error_handler on_error)
        : queue_(queue), clock_(queue.clock()), run_(std::move(run)), on_error_(std::move(on_error)) {
        if (threads == 0) throw std::invalid_argument("worker_pool: at least one thread is needed");
        if (!run_ || !on_error_) throw std::invalid_argument("worker_pool: a handler is empty");
        workers_.reserve(threads);
        handed_back_.reserve(threads);  // at most one per worker: never grows in work()
        try {
            for (std::size_t i = 0; i < threads; ++i) {
                {
                    std::lock_guard lock(mutex_);
                    ++live_;
                }
                try {
                    workers_.emplace_back([this] { work(); });
                } catch (...) {
                    std::lock_guard lock(mutex_);
                    --live_;
                    throw;
                }
            }
        } catch (...) {
            halt();
            throw;
        }
    }

    /// Stops taking items and waits for the running jobs (however long they
    /// take), then joins the threads. Unlike stop(), it neither closes the
    /// queue nor takes items out of it; a job already taken is still run.
    ~worker_pool() { halt(); }

    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    /// Closes the queue, lets running jobs finish until grace has passed on
    /// the queue's clock, and returns every item that never started. Returns
    /// after the grace period even if jobs still run (see still_running);
    /// the destructor waits for them. A second call returns nothing new.
    stop_result stop(steady_time::duration grace) {
        const steady_time deadline = clock_.now() + grace;
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        queue_.close();
        stop_.request_stop();

        stop_result out;
        {
            std::unique_lock lock(mutex_);
            // Idle workers leave at once (the queue is closed); wait until
            // each worker has left or is inside a job, so that no item taken
            // but not started can appear after this point.
            while (live_ != running_) cv_.wait(lock);
            while (running_ > 0 && clock_.now() < deadline) cv_.wait_until(lock, deadline);
            out.still_running = running_;
            out.not_started = std::move(handed_back_);
            handed_back_.clear();
        }
        auto rest = queue_.drain();
        out.not_started.reserve(out.not_started.size() + rest.size());
        for (auto& it : rest) out.not_started.push_back(std::move(it));
        return out;
    }

    worker_pool_stats stats() const {
        std::lock_guard lock(mutex_);
        return {live_, running_, completed_, failed_, unreported_};
    }

private:
    void work() {
        const std::stop_token stop = stop_.get_token();
        for (;;) {
            auto it = queue_.pop(stop);
            {
                std::lock_guard lock(mutex_);
                if (!it || stopping_) {
                    if (it) handed_back_.push_back(std::move(*it));
                    --live_;
                    break;
                }
                ++running_;
            }
            const bool ok = run_one(*it);
            bool wake = false;
            {
                std::lock_guard lock(mutex_);
                --running_;
                ++(ok ? completed_ : failed_);
                wake = stopping_;
            }
            if (wake) cv_.notify_all();
        }
        cv_.notify_all();
    }

    // Runs the job; false if it threw (then the error handler was told).
    bool run_one(item& it) noexcept {
        try {
            run_(it);
            return true;
        } catch (...) {
            try {
                on_error_(it, std::current_exception());
            } catch (...) {
                std::lock_guard lock(mutex_);
                ++unreported_;
            }
            return false;
        }
    }

    void halt() noexcept {
        stop_.request_stop();
        workers_.clear();  // joins
    }

    queue_type& queue_;
    const Clock clock_;
    const job_handler run_;
    const error_handler on_error_;

    mutable std::mutex mutex_;
    typename Clock::condition_variable cv_{clock_};
    std::size_t live_ = 0;
    std::size_t running_ = 0;
    bool stopping_ = false;
    std::vector<item> handed_back_;
    std::uint64_t completed_ = 0;
    std::uint64_t failed_ = 0;
    std::uint64_t unreported_ = 0;

    std::stop_source stop_;
    std::vector<std::jthread> workers_;  // last: joined before the rest is destroyed
};

}  // namespace tarry
