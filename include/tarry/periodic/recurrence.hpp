// A periodic schedule: what it is (schedule_spec, a value) and its
// occurrences (recurrence, the spec compiled with its time zone). Every
// process that builds the same spec computes the same nominal times, so any
// worker can publish an occurrence's successor and no leader is needed
// (docs/periodic.md).
//
// Nominal times are wall_time (UTC instants) at millisecond precision; a
// cron schedule's are whole seconds. Pure values: no clock is read (the
// caller passes "now"), no I/O beyond loading the zone once in
// make_recurrence. A recurrence is immutable and safe to share between
// threads.
#pragma once

#include "tarry/periodic/cron_expression.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <variant>

namespace tarry::periodic {

/// Every `interval`, aligned to the Unix epoch in UTC: the nominal times are
/// 1970-01-01T00:00:00Z + offset + k * interval (no time zone applies).
struct every_interval {
    std::chrono::milliseconds interval{0};  ///< > 0
    std::chrono::milliseconds offset{0};    ///< in [0, interval)
};

/// What a schedule does with an occurrence found more than
/// misfire_threshold after its nominal time (its workers were stopped, say).
enum class misfire_policy {
    run_once,  ///< run it once now, then continue from the next future occurrence
    skip,      ///< do not run it; continue from the next future occurrence
    catch_up,  ///< run the missed occurrences one by one, at most catch_up_limit of them (the latest)
};

/// What a periodic schedule is: when (every N ms, or cron), in which zone,
/// between which times, how many, and what a misfire does. A plain value;
/// make_recurrence checks and compiles it.
struct schedule_spec {
    /// Every `interval`, or a cron expression (in time_zone).
    std::variant<every_interval, cron_expression> when;
    /// A zone of the system's tz database ("Europe/Berlin"); cron only.
    std::string time_zone = "UTC";
    std::optional<wall_time> start;  ///< no occurrence before it
    std::optional<wall_time> end;    ///< no occurrence after it
    /// At most this many occurrences are published in the chain; ones a
    /// misfire policy skips over are never published and do not count.
    std::optional<std::uint64_t> limit;
    /// The first occurrence is the time of the upsert, not the next
    /// nominal time (later ones follow the schedule).
    bool run_now = false;
    /// What to do with an occurrence found more than misfire_threshold
    /// late. Default run_once.
    misfire_policy misfire = misfire_policy::run_once;
    /// How late an occurrence may be found and still count as on time.
    /// Default 60 s.
    std::chrono::milliseconds misfire_threshold{60'000};
    std::uint32_t catch_up_limit = 10;  ///< catch_up only; >= 1
};

/// The spec in one line, as `tarry schedule list` prints it and the control
/// stream carries it: "every 1000ms", "every 60000ms+5000ms",
/// "cron 0 3 * * * tz Europe/Berlin" (no tz part for UTC), then those of
/// " start S", " end S" (S: epoch seconds as format_nominal writes them,
/// occurrence.hpp), " limit N", " run-now", " misfire skip",
/// " misfire catch-up N", " misfire-threshold Nms" that differ from the
/// defaults, in that order.
std::string to_string(const schedule_spec& spec);

/// The result of parse_spec: the spec, or why not.
struct spec_parse_result {
    std::optional<schedule_spec> spec;  ///< the spec; nothing on failure
    std::error_code error;              ///< empty on success
    std::string detail;                 ///< the part at fault; empty on success
};
/// Reads what to_string writes (the order of the optional parts is free)
/// and checks the values as make_recurrence does (loading the zone). On
/// failure `error` is set (errc::invalid_cron, unknown_time_zone or
/// invalid_schedule) and `detail` names the part at fault.
spec_parse_result parse_spec(std::string_view text);

struct recurrence_result;

/// A schedule_spec compiled with its time zone: its nominal times. Made by
/// make_recurrence; immutable, safe to share between threads.
class recurrence {
public:
    /// The spec it was made from.
    const schedule_spec& spec() const noexcept { return spec_; }

    /// The first nominal time strictly after `after` and within [start, end];
    /// nothing when the schedule has no more (past its end, or past what
    /// wall_time holds: year 2262). Ignores limit (the chain counts).
    /// A cron's local times map to instants by the DST rules of
    /// cron_expression::follows_clock().
    std::optional<wall_time> next_after(wall_time after) const;

    /// The chain's first occurrence for an upsert at `now`: `now` itself
    /// (rounded up to the millisecond, and not before start) when run_now,
    /// else the first nominal time at or after now.
    std::optional<wall_time> first(wall_time now) const;

    struct zone;  // the loaded time zone (opaque)

private:
    friend recurrence_result make_recurrence(const schedule_spec& spec);
    std::optional<wall_time> next_cron(const cron_expression& cron, wall_time after) const;

    schedule_spec spec_;
    std::shared_ptr<const zone> zone_;  // cron only
};

/// The result of make_recurrence: the compiled schedule, or why not.
struct recurrence_result {
    std::optional<recurrence> schedule;  ///< the compiled schedule; nothing on failure
    std::error_code error;               ///< empty on success
    std::string detail;                  ///< what was wrong; empty on success
};

/// Compiles `spec`: loads its time zone and checks it. Refuses an interval
/// <= 0, an offset outside [0, interval), an end before the start, a limit
/// or catch_up_limit of 0, a negative misfire_threshold, a time zone other
/// than "UTC" on an every_interval (errc::invalid_schedule) and a zone the
/// tz database lacks
/// (errc::unknown_time_zone). A cron spec's zone is read once here.
recurrence_result make_recurrence(const schedule_spec& spec);

}  // namespace tarry::periodic
