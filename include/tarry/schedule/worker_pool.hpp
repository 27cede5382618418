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
// - stop(grace) never waits past the grace: a job still running at the
//   deadline is abandoned. Its thread is detached (neither stop() nor the
//   destructor waits for it), and once the job returns that thread touches
//   only its item (destroyed there) and what it co-owns with the pool (the
//   two handlers, the counters and their mutex) - never the queue, never
//   the pool object. So a job that may outlive a grace, and the error
//   handler, must use only what they captured by value or by shared
//   ownership, nothing the owner destroys after stop(). The return of an
//   abandoned job is not counted as completed or failed (stats().abandoned
//   counted it at the deadline); an exception it throws still goes to the
//   error handler. The pool does not say which items were abandoned (it
//   never copies them): an owner that needs to know keeps its own record
//   of running jobs, co-owned by the handler.
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
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tarry {

/// A one-line description of an exception for a person: what() of a
/// std::exception, else "unknown exception". Empty pointer: "no exception".
std::string exception_text(const std::exception_ptr& e);

/// Counters and gauges of a worker_pool, read together under its lock.
struct worker_pool_stats {
    std::size_t threads = 0;      ///< worker threads still taking or running jobs (abandoned too)
    std::size_t running = 0;      ///< jobs running now (abandoned ones too, until they return)
    std::uint64_t completed = 0;  ///< jobs that returned normally
    std::uint64_t failed = 0;     ///< jobs that threw (each reported to the error handler)
    std::uint64_t unreported = 0; ///< of those, reports where the error handler threw too
    std::uint64_t abandoned = 0;  ///< jobs still running at a stop()'s deadline, left to run alone
};

/// N threads that take due items from a delay_queue and run a handler on
/// each; a job that throws never kills its thread, and stop() never waits
/// past its grace (see this header's opening comment for every promise).
template <class T, clock_source Clock = steady_clock_source>
class worker_pool {
public:
    using queue_type = delay_queue<T, Clock>;  ///< the queue it takes items from
    using item = due_item<T>;                  ///< what a job runs on
    /// Runs one job on a worker thread. May move from item.value. A job
    /// that may outlive a stop()'s grace: see the promises above.
    using job_handler = std::function<void(item&)>;
    /// Told of each exception a job threw, on the same worker thread, with
    /// the item (whose value the job may have moved from). Should not throw.
    using error_handler = std::function<void(item&, std::exception_ptr)>;

    /// What stop() hands back.
    struct stop_result {
        std::vector<item> not_started;  ///< in due order; the caller owns them now
        std::size_t still_running = 0;  ///< jobs this call abandoned: they outlived the grace
    };

    /// Starts `threads` workers on queue, which must outlive the pool. Throws
    /// std::invalid_argument if threads is 0 or a handler is empty, and
    /// std::system_error if a thread cannot start.
    worker_pool(queue_type& queue, std::size_t threads, job_handler run, error_handler on_error)
        : queue_(queue),
          shared_(std::make_shared<shared>(queue.clock(), std::move(run), std::move(on_error),
                                           threads)) {
        if (threads == 0) throw std::invalid_argument("worker_pool: at least one thread is needed");
        if (!shared_->run || !shared_->on_error)
            throw std::invalid_argument("worker_pool: a handler is empty");
        workers_.reserve(threads);
        shared_->handed_back.reserve(threads);  // at most one per worker: never grows in work()
        try {
            for (std::size_t i = 0; i < threads; ++i) start_worker(i);
        } catch (...) {
            halt();
            throw;
        }
    }

    /// Stops taking items and waits for the running jobs that were not
    /// abandoned (however long they take; after stop() there are none), then
    /// joins their threads. Unlike stop(), it neither closes the queue nor
    /// takes items out of it; a job already taken is still run.
    ~worker_pool() { halt(); }

    worker_pool(const worker_pool&) = delete;
    worker_pool& operator=(const worker_pool&) = delete;

    /// Closes the queue, lets running jobs finish until grace has passed on
    /// the queue's clock, and returns every item that never started. At the
    /// deadline it abandons the jobs still running (see still_running and
    /// the promises above) and returns; nothing waits for them. Afterwards
    /// the pool and then the queue may be destroyed at once. A second call
    /// returns nothing new.
    stop_result stop(steady_time::duration grace) {
        shared& s = *shared_;
        const steady_time deadline = s.clock.now() + grace;
        {
            std::lock_guard lock(s.mutex);
            s.stopping = true;
        }
        queue_.close();
        stop_.request_stop();

        stop_result out;
        {
            std::unique_lock lock(s.mutex);
            // Idle workers leave at once (the queue is closed); wait until
            // each worker has left or is inside a job, so that no item taken
            // but not started can appear after this point.
            while (s.live != s.running) s.cv.wait(lock);
            while (s.running > s.adrift && s.clock.now() < deadline)
                s.cv.wait_until(lock, deadline);
            out.still_running = abandon_running();
            out.not_started = std::move(s.handed_back);
            s.handed_back.clear();
        }
        auto rest = queue_.drain();
        out.not_started.reserve(out.not_started.size() + rest.size());
        for (auto& it : rest) out.not_started.push_back(std::move(it));
        return out;
    }

    /// Counters and gauges, read together under the pool's lock. Not from
    /// a worker thread of this pool.
    worker_pool_stats stats() const {
        std::lock_guard lock(shared_->mutex);
        const shared& s = *shared_;
        return {s.live, s.running, s.completed, s.failed, s.unreported, s.abandoned};
    }

private:
    // How a job ended.
    enum class outcome { completed, failed, unreported };

    // Where a worker is. Only stop() makes a running worker abandoned;
    // only the worker leaves running.
    enum class phase : unsigned char { idle, running, abandoned };

    // What the pool and its worker threads share: the handlers, and the
    // state and counters under the mutex. Each thread co-owns it, so a
    // thread whose job was abandoned may use it after the pool is gone.
    struct shared {
        shared(const Clock& c, job_handler r, error_handler e, std::size_t threads)
            : run(std::move(r)), on_error(std::move(e)), clock(c), phases(threads, phase::idle) {}

        const job_handler run;
        const error_handler on_error;
        const Clock clock;

        std::mutex mutex;
        typename Clock::condition_variable cv{clock};
        std::vector<phase> phases;  // one per worker
        std::size_t live = 0;
        std::size_t running = 0;
        std::size_t adrift = 0;  // of those, abandoned
        bool stopping = false;
        std::vector<item> handed_back;
        std::uint64_t completed = 0;
        std::uint64_t failed = 0;
        std::uint64_t unreported = 0;
        std::uint64_t abandoned = 0;

        // A worker took it (empty: the queue closed or stop was requested).
        // True if the job is to run; false if the worker leaves (an item
        // taken while stopping is handed back).
        bool begin(std::size_t me, std::optional<item>& it) {
            {
                std::lock_guard lock(mutex);
                if (it && !stopping) {
                    phases[me] = phase::running;
                    ++running;
                    return true;
                }
                if (it) handed_back.push_back(std::move(*it));
                --live;
            }
            cv.notify_all();
            return false;
        }

        // Runs the job; says how it ended (after telling the error handler).
        outcome run_one(item& it) noexcept {
            try {
                run(it);
                return outcome::completed;
            } catch (...) {
                try {
                    on_error(it, std::current_exception());
                    return outcome::failed;
                } catch (...) {
                    return outcome::unreported;
                }
            }
        }

        // A job returned. Decides, under the mutex, against stop()'s
        // abandon_running(): an abandoned job is not counted and its worker
        // leaves without a word (nothing waits for it); otherwise the job
        // is counted and stop() woken if it waits. True if the worker goes
        // on taking items; false if it leaves (abandoned, or stopping).
        bool end(std::size_t me, outcome o) {
            {
                std::lock_guard lock(mutex);
                --running;
                if (phases[me] == phase::abandoned) {
                    --adrift;
                    --live;
                    return false;
                }
                phases[me] = phase::idle;
                ++(o == outcome::completed ? completed : failed);
                if (o == outcome::unreported) ++unreported;
                if (!stopping) return true;
                --live;
            }
            cv.notify_all();
            return false;
        }
    };

    // The body of worker `me`. Once its job is abandoned it no longer
    // touches the queue (nor anything but s).
    static void work(shared& s, queue_type& queue, std::stop_token stop, std::size_t me) {
        for (;;) {
            auto it = queue.pop(stop);
            if (!s.begin(me, it)) return;
            if (!s.end(me, s.run_one(*it))) return;
        }
    }

    // stop() at its deadline, with the mutex held: abandons every job still
    // running and detaches its worker's thread, once. The rule: the thread
    // of a worker is detached by the stop() call that abandons it, right
    // then, and by nothing else; the others are joined by the destructor.
    std::size_t abandon_running() {
        shared& s = *shared_;
        std::size_t n = 0;
        for (std::size_t i = 0; i < workers_.size(); ++i) {
            if (s.phases[i] != phase::running) continue;
            s.phases[i] = phase::abandoned;
            workers_[i].detach();
            ++n;
        }
        s.adrift += n;
        s.abandoned += n;
        return n;
    }

    void start_worker(std::size_t me) {
        {
            std::lock_guard lock(shared_->mutex);
            ++shared_->live;
        }
        try {
            workers_.emplace_back([s = shared_, &q = queue_, stop = stop_.get_token(), me] {
                work(*s, q, stop, me);
            });
        } catch (...) {
            std::lock_guard lock(shared_->mutex);
            --shared_->live;
            throw;
        }
    }

    void halt() noexcept {
        stop_.request_stop();
        workers_.clear();  // joins
    }

    queue_type& queue_;
    const std::shared_ptr<shared> shared_;
    std::stop_source stop_;
    // Last: joined (the abandoned ones detached) before the rest goes.
    std::vector<std::jthread> workers_;
};

}  // namespace tarry
