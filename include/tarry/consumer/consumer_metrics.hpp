// What the consumer shows of itself beyond its counters: the histograms,
// the counts by reason, the gauges an operator alarms on, its health, and
// the held jobs a page at a time. Snapshots, taken from any thread.
// Names as in docs/design.md, "One vocabulary"; tarry/http renders them.
#pragma once

#include "tarry/consumer/job_event.hpp"
#include "tarry/time/time_points.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tarry {

/// Durations counted into fixed buckets (Prometheus' histogram): counts[i]
/// observations were <= bounds[i] and > bounds[i - 1]; the last element of
/// counts (one more than bounds) holds those above every bound. A value.
struct duration_histogram {
    std::span<const double> bounds;     ///< upper bounds in seconds, ascending (static storage)
    std::vector<std::uint64_t> counts;  ///< bounds.size() + 1 entries, not cumulative
    double sum_seconds = 0;             ///< sum of every observation (each counts at most 24 h)
    std::uint64_t count = 0;            ///< number of observations (the sum of counts)
};

/// The buckets of tarry_start_lateness_seconds: 100 us to 60 s.
std::span<const double> start_lateness_bounds() noexcept;
/// The buckets of tarry_handler_duration_seconds: 1 ms to 10 min.
std::span<const double> handler_duration_bounds() noexcept;

/// The reasons a job is dead-lettered, as labels: the part of x-tarry-reason
/// before the first ':' (docs/design.md). A bounded set, in this order; the
/// last, "other", counts a reason that is none of the others (none is
/// expected: it keeps the counts by reason adding up to the total).
inline constexpr std::array<std::string_view, 8> dead_letter_reasons = {
    "invalid-schedule", "unreadable", "delay-exceeds-max", "expired-before-due",
    "attempts-exhausted", "rejected", "backoff-failed", "other"};
/// The reasons a job is requeued (job_event::reason of `requeued`), in this
/// order; "other" as above. "delivery-limit": its x-delivery-count was
/// close to the work queue's delivery limit when it arrived, so a fresh
/// copy replaced it (subscription_options::delivery_limit).
inline constexpr std::array<std::string_view, 6> requeue_reasons = {"handler",     "shutdown",       "backlog",
                                                                     "copy-failed", "delivery-limit", "other"};

/// One dead letter, as the status page lists the latest ones.
struct dead_letter_info {
    std::string id;      ///< message_id ("" when unset)
    std::string reason;  ///< x-tarry-reason, whole
    wall_time at;        ///< when its copy was confirmed
};

/// How many dead letters consumer_metrics::recent_dead_letters keeps.
inline constexpr std::size_t recent_dead_letters_kept = 20;

/// A snapshot of the consumer's metrics; the parts may be a few jobs apart.
struct consumer_metrics {
    consumer_stats counters;  ///< the counters, as consumer::stats() gives them
    /// dead_lettered by reason, indexed as dead_letter_reasons.
    std::array<std::uint64_t, dead_letter_reasons.size()> dead_lettered_by_reason{};
    /// requeued by reason, indexed as requeue_reasons.
    std::array<std::uint64_t, requeue_reasons.size()> requeued_by_reason{};
    /// Start time - due time of every run (the `run` event's lateness).
    duration_histogram start_lateness;
    /// How long handlers ran (from the `run` event to their outcome).
    duration_histogram handler_duration;
    /// The earliest due time among held jobs (the ready path's oldest and
    /// the first held by due time); empty when none is held.
    std::optional<wall_time> next_due;
    /// How long the oldest delivery not yet settled (acked or nacked) has
    /// been unacknowledged; empty when none is. A delivery whose channel
    /// was lost no longer counts (the broker redelivers it). Alarm on it
    /// before the broker's consumer_timeout.
    std::optional<std::chrono::duration<double>> oldest_unacked_age;
    /// 1 while the consuming connection is open and a channel consumes.
    bool connected = false;
    /// The latest dead letters, newest first: at most recent_dead_letters_kept.
    std::vector<dead_letter_info> recent_dead_letters;
};

/// Whether the consumer can do its work now.
struct consumer_health {
    bool consuming = false;   ///< the consuming connection is open and a channel consumes
    bool copies_open = false; ///< the copies connection is open (and not blocked by the broker)
    /// Empty when both hold; else why not, for a person ("consuming
    /// connection lost: ...", "copies connection blocked by the broker: ...",
    /// "stopping", "not started").
    std::string reason;
    /// Both hold: consuming and copies_open.
    bool ready() const noexcept { return consuming && copies_open; }
};

/// One held job as listed by consumer::held_jobs().
struct held_job_info {
    std::string id;          ///< message_id ("" when unset)
    wall_time due;           ///< its due time (wall clock)
    std::uint32_t attempt = 1;  ///< 1 for the first run (x-tarry-attempt)
    std::size_t lane = 0;    ///< the consuming channel (lane) it came from
};

/// A page of held jobs in due order.
struct held_jobs_page {
    std::vector<held_job_info> jobs;  ///< this page's jobs, in due order
    /// Pass as `after` for the next page; empty on the last page. Opaque,
    /// and stable: a cursor stays valid while jobs come and go (the next
    /// page starts after the cursor's place in due order).
    std::optional<std::string> next;
    std::size_t held = 0;    ///< jobs held in all (consumer_stats::held)
};

/// The most jobs consumer::held_jobs() returns in one page.
inline constexpr std::size_t held_jobs_max_limit = 1000;

}  // namespace tarry
