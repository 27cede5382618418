// The handlers' side of the consumer: run a due job's handler and hand what
// came of it back to the I/O thread. Everything a run touches is in
// worker_context, which the workers (threads, or coroutines: async_runner)
// co-own, so a handler abandoned at stop() may return after the consumer is
// gone: its outcome is then discarded, and nothing of the consumer is
// touched. A run is begin() (every check that may hand the job back unrun,
// then the `run` event), the handler, then end().
#pragma once

#include "core/consumer_core.hpp"

#include "tarry/consumer/consumer.hpp"
#include "cancellations.hpp"
#include "run_claims.hpp"
#include "tarry/schedule/delay_queue.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tarry::detail {

/// One run of a handler: the job, the message and the view the handler
/// sees. It stays where it is from begin() to end() (the view refers to
/// the message), so it is neither copied nor moved.
struct job_run {
    job_run() = default;
    job_run(const job_run&) = delete;
    job_run& operator=(const job_run&) = delete;

    finished_job finished;
    std::optional<amqp::message> unpacked;  ///< a held job's message, unpacked to run
    std::optional<tarry::job> view;         ///< what the handler sees
    std::uint64_t id = 0;                   ///< its place among the running
    std::chrono::steady_clock::time_point began{};
};

class worker_context {
public:
    /// `deliver` is called (under the inbox's lock) when outcomes wait and
    /// none was announced yet; it must only post to the I/O thread. A job
    /// that `cancels` covers when it is due is handed back unrun
    /// (finished_job::result::cancelled); without tables none is. A copy of
    /// an occurrence whose run claim another copy won, or none was read yet
    /// (`claims`), is handed back unrun too (deduplicated, unclaimed);
    /// without claims every copy runs. `is_permanent` and `on_event` are
    /// called as given: the consumer passes them guarded (hook_calls.hpp).
    worker_context(job_handler handler, std::function<bool(const std::exception_ptr&)> is_permanent,
                   std::function<void(const job_event&)> on_event, std::shared_ptr<core_counters> counters,
                   std::shared_ptr<const lane_incarnations> incarnations, std::function<void()> deliver,
                   std::shared_ptr<const cancellations> cancels = nullptr,
                   std::shared_ptr<const run_claims> claims = nullptr);

    /// Runs one due job with the synchronous handler (a worker thread).
    void run(held_item& item);
    /// Takes a due job for a run: false when it is handed back unrun (its
    /// delivery is not current, not due by the wall clock, cancelled, not
    /// claimed, misfired); true when its handler may start, `run` holds it
    /// and its `run` event is out. Any thread.
    bool begin(held_item& item, job_run& run);
    /// The handler of a run that began returned `outcome`: handed back to
    /// the I/O thread, or discarded when the run was abandoned. Any thread.
    void end(job_run& run, job_outcome outcome);
    /// What an exception out of a handler means: reject (permanent_error,
    /// is_permanent) or failure.
    job_outcome outcome_of(std::exception_ptr e) const;
    /// The outcomes waiting, for the I/O thread.
    std::vector<finished_job> take_finished();
    /// Handlers still running are abandoned: each gets an `abandoned` event
    /// now, and its outcome is discarded when it returns. Returns how many.
    std::size_t abandon_running(wall_time now);
    /// No outcome is delivered from now on (the I/O thread is ending).
    void close();

    const std::shared_ptr<core_counters>& counters() const noexcept { return counters_; }

private:
    struct running_job {
        job_event event;  ///< its run event
        bool abandoned = false;
    };
    void hand_back(finished_job f);
    void emit(const job_event& e) const;

    const job_handler handler_;
    const std::function<bool(const std::exception_ptr&)> is_permanent_;
    const std::function<void(const job_event&)> on_event_;
    const std::shared_ptr<core_counters> counters_;
    const std::shared_ptr<const lane_incarnations> incarnations_;
    const std::function<void()> deliver_;
    const std::shared_ptr<const cancellations> cancels_;
    const std::shared_ptr<const run_claims> claims_;

    std::mutex running_mutex_;
    std::uint64_t last_running_id_ = 0;
    std::unordered_map<std::uint64_t, running_job> running_;

    std::mutex inbox_mutex_;
    std::vector<finished_job> inbox_;
    bool closed_ = false;
};

}  // namespace tarry::detail
