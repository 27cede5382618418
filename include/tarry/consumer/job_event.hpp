// The life of each job as events (for logs, samples and tests) and the
// consumer's counters.
#pragma once

#include "tarry/time/time_points.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tarry {

/// One step in a job's life.
struct job_event {
    /// What happened to the job.
    enum class kind {
        run,        ///< the handler starts (at = start time)
        succeeded,  ///< handler succeeded; the ack is on its way
        parked,     ///< republished to a wait queue (confirmed) and acked; next_due = due
        dead,       ///< dead-lettered (confirmed) and acked; reason says why
        retry,      ///< failed; a retry copy is confirmed, due at next_due
        requeued,   ///< given back to the queue; reason: handler, shutdown, backlog, copy-failed, delivery-limit
        dropped,    ///< its delivery is no longer current (its channel was lost):
                    ///< the broker redelivers it; nothing was published for it
        failed,     ///< a step of ours failed (a copy refused or not confirmed in
                    ///< time); reason says which; the original is not acknowledged,
                    ///< so nothing is lost
        abandoned,  ///< stop() left its handler running after shutdown_grace; not
                    ///< acknowledged: the broker redelivers it
        cancelled,  ///< a tombstone covers it (publisher::async_cancel or a reschedule):
                    ///< acknowledged without running, or after a run that a cancel
                    ///< reached failed (not retried)
        scheduled,  ///< a periodic occurrence that ran: its successor is confirmed,
                    ///< due at next_due; its own outcome's event follows
        skipped,    ///< a periodic occurrence found later than its misfire threshold
                    ///< that its policy does not run: acknowledged without running
                    ///< (after its successor's `scheduled`); reason says why
        deduplicated,  ///< a copy of a periodic occurrence whose run claim another copy
                       ///< won: acknowledged without running and without a successor
    };
    kind what;                   ///< what happened
    std::string id;              ///< message_id ("" when unset)
    wall_time due;               ///< due time as read (zero when unreadable)
    wall_time at;                ///< when this happened
    std::uint32_t attempt = 1;   ///< 1 for the first run (x-tarry-attempt)
    std::string reason;          ///< dead, failed, requeued, dropped, abandoned: why
    std::optional<wall_time> next_due;  ///< retry / parked: when it comes back due
    /// The job ran, and a cancel of it was read before it ended (it is never
    /// interrupted): on succeeded, and on cancelled after a run.
    bool cancel_requested = false;
};

/// "run", "parked", ... as used in logs and the echo_worker sample.
const char* to_string(job_event::kind k) noexcept;

/// Counters since start (names as in docs/design.md, "One vocabulary"). A
/// snapshot; thread-safe to take at any time, stop() included.
struct consumer_stats {
    std::uint64_t received = 0;       ///< deliveries taken
    std::uint64_t fast_path = 0;      ///< of those, due at arrival (never entered the delay queue)
    std::uint64_t started = 0;        ///< handler calls
    std::uint64_t succeeded = 0;      ///< handler succeeded and the ack was sent
    std::uint64_t handler_failures = 0;  ///< handler failures (exception or failure())
    std::uint64_t retried = 0;        ///< retry copies confirmed (`retry` events)
    std::uint64_t dead_lettered = 0;  ///< dead letters confirmed (`dead` events)
    std::uint64_t parked = 0;         ///< parked copies confirmed (`parked` events)
    std::uint64_t requeued = 0;       ///< given back to the queue (`requeued` events)
    std::uint64_t dropped = 0;        ///< deliveries no longer current when settled (channel lost)
    std::uint64_t copy_failures = 0;  ///< copies refused or not confirmed in time (`failed` events)
    std::uint64_t late_confirms = 0;  ///< copies confirmed after their original was settled
                                      ///< otherwise: possible duplicates, never losses
    std::uint64_t abandoned = 0;      ///< handlers left running by stop()
    std::uint64_t cancelled = 0;      ///< acknowledged because a tombstone covers them
    std::uint64_t scheduled = 0;      ///< successors of periodic occurrences confirmed
    std::uint64_t skipped = 0;        ///< misfired periodic occurrences acknowledged without running
    std::uint64_t deduplicated = 0;   ///< copies of periodic occurrences that lost their run claim, acknowledged
    std::uint64_t channel_losses = 0; ///< consuming channels lost (broker close, connection loss)
    std::uint64_t lane_changes = 0;   ///< hand-overs: a lane held its share, another started taking deliveries too
    std::uint64_t events_published = 0;  ///< lifecycle events handed to the copies connection
    std::uint64_t events_dropped = 0;    ///< lifecycle events not published: too many waiting, the
                                         ///< copies connection blocked, or the events channel down
    std::uint64_t hook_exceptions = 0;   ///< exceptions thrown by a hook (consumer_hooks, is_permanent),
                                         ///< each told to on_connection; the consumer went on
    std::size_t held = 0;             ///< held now (delay queue + ready path)
    std::size_t held_bytes = 0;       ///< what they count against max_held_bytes
    std::size_t running = 0;          ///< handlers running now
};

}  // namespace tarry
