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
    enum class kind {
        run,        ///< the handler starts (at = start time)
        succeeded,  ///< handler succeeded; the ack is on its way
        parked,     ///< republished to a wait queue (confirmed) and acked; next_due = due
        dead,       ///< dead-lettered (confirmed) and acked; reason says why
        retry,      ///< failed; a retry copy is confirmed, due at next_due
        requeued,   ///< given back to the queue (handler asked, or shutdown)
        dropped,    ///< its channel was lost before it ran; the broker redelivers it
        failed,     ///< a step failed (e.g. a republish was refused); reason says
                    ///< which; the original was not acknowledged, so nothing is lost
    };
    kind what;
    std::string id;              ///< message_id ("" when unset)
    wall_time due;               ///< due time as read (zero when unreadable)
    wall_time at;                ///< when this happened
    std::uint32_t attempt = 1;
    std::string reason;          ///< dead / failed: why
    std::optional<wall_time> next_due;  ///< retry / parked: when it comes back due
};

/// "run", "parked", ... as used in logs and the echo_worker sample.
const char* to_string(job_event::kind k) noexcept;

/// Counters since start. A snapshot; thread-safe to take.
struct consumer_stats {
    std::uint64_t received = 0;       ///< deliveries taken
    std::uint64_t fast_path = 0;      ///< of those, due at arrival (never entered the delay queue)
    std::uint64_t started = 0;        ///< handler calls
    std::uint64_t succeeded = 0;
    std::uint64_t failed = 0;         ///< handler failures (exception or failure())
    std::uint64_t retried = 0;
    std::uint64_t dead_lettered = 0;
    std::uint64_t parked = 0;
    std::uint64_t requeued = 0;
    std::uint64_t dropped = 0;        ///< held jobs dropped at a channel loss
    std::uint64_t republish_failures = 0;
    std::uint64_t channel_losses = 0; ///< consuming channels lost (broker close, connection loss)
    std::uint64_t lane_changes = 0;   ///< hand-overs: a lane held its share, another took deliveries
    std::size_t held = 0;             ///< held now (delay queue + ready lane)
    std::size_t held_bytes = 0;
    std::size_t running = 0;
};

}  // namespace tarry
