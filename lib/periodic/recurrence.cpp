// recurrence: the nominal times of a schedule. `every` is arithmetic on the
// epoch; a cron schedule walks its zone's segments of constant UTC offset
// (between two transitions), searching each for the first matching local
// time, with the daylight-saving rules of cron_expression::follows_clock().
#include "tarry/periodic/recurrence.hpp"
#include "tarry/periodic/error.hpp"

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>

namespace tarry::periodic {

struct recurrence::zone {
    cctz::time_zone tz;
};

namespace {

using namespace std::chrono;
using cctz_seconds = cctz::time_point<cctz::seconds>;

civil_seconds to_local(const cctz::civil_second& c) {
    const auto day = local_days(year{static_cast<int>(c.year())} / c.month() / c.day());
    return day + hours{c.hour()} + minutes{c.minute()} + seconds{c.second()};
}

// The whole seconds wall_time holds: no nominal time lies beyond them.
constexpr auto last_second = floor<seconds>(wall_time::max().time_since_epoch());
constexpr auto first_second = ceil<seconds>(wall_time::min().time_since_epoch());

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    const auto q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

recurrence_result refuse(errc code, std::string detail) {
    recurrence_result r;
    r.error = code;
    r.detail = std::move(detail);
    return r;
}

}  // namespace

recurrence_result make_recurrence(const schedule_spec& spec) {
    if (const auto* e = std::get_if<every_interval>(&spec.when)) {
        if (e->interval <= milliseconds{0})
            return refuse(errc::invalid_schedule, "every: the interval must be above 0 ms");
        if (e->offset < milliseconds{0} || e->offset >= e->interval)
            return refuse(errc::invalid_schedule, "every: the offset must lie in [0, interval)");
    }
    if (spec.start && spec.end && *spec.end < *spec.start)
        return refuse(errc::invalid_schedule, "the end is before the start");
    if (spec.limit && *spec.limit == 0) return refuse(errc::invalid_schedule, "a limit of 0 occurrences");
    if (spec.catch_up_limit == 0) return refuse(errc::invalid_schedule, "a catch-up limit of 0");
    if (spec.misfire_threshold < milliseconds{0})
        return refuse(errc::invalid_schedule, "a negative misfire threshold");
    recurrence r;
    r.spec_ = spec;
    if (std::holds_alternative<cron_expression>(spec.when)) {
        auto z = std::make_shared<recurrence::zone>();
        // cctz reads "UTC" and fixed offsets without the database; any other
        // name must be a file of it (load_time_zone falls back to UTC and
        // says false for an unknown one).
        if (spec.time_zone.empty() || !cctz::load_time_zone(spec.time_zone, &z->tz))
            return refuse(errc::unknown_time_zone,
                          "time zone '" + spec.time_zone + "' is not in the system's tz database");
        r.zone_ = std::move(z);
    } else if (spec.time_zone != "UTC") {
        return refuse(errc::invalid_schedule, "a time zone applies to cron schedules only (every is UTC)");
    }
    recurrence_result result;
    result.schedule = std::move(r);
    return result;
}

std::optional<wall_time> recurrence::next_after(wall_time after) const {
    if (spec_.start && *spec_.start > after) after = *spec_.start - nanoseconds{1};
    std::optional<wall_time> next;
    if (const auto* e = std::get_if<every_interval>(&spec_.when)) {
        const auto a = floor<milliseconds>(after.time_since_epoch()).count() - e->offset.count();
        const auto k = floor_div(a, e->interval.count()) + 1;
        if (k > (floor<milliseconds>(wall_time::max().time_since_epoch()).count() - e->offset.count()) /
                    e->interval.count())
            return std::nullopt;
        next = wall_time(duration_cast<wall_time::duration>(milliseconds{k * e->interval.count()} + e->offset));
    } else {
        next = next_cron(std::get<cron_expression>(spec_.when), after);
    }
    if (next && spec_.end && *next > *spec_.end) return std::nullopt;
    return next;
}

std::optional<wall_time> recurrence::next_cron(const cron_expression& cron, wall_time after) const {
    const auto& tz = zone_->tz;
    auto t = floor<seconds>(after.time_since_epoch()) + seconds{1};
    if (t < first_second) t = first_second;
    while (t <= last_second) {
        const cctz_seconds tp{t};
        const auto here = tz.lookup(tp);
        auto civil = here.cs;
        auto at = t;  // the instant of `civil` in this segment

        cctz::time_zone::civil_transition prev;
        if (!cron.follows_clock() && tz.prev_transition(tp + seconds{1}, &prev)) {
            const auto prev_at = tz.lookup(prev.to).trans.time_since_epoch();
            if (prev.to < prev.from && civil < prev.from) {
                // In the second instance of a repeated hour: those local
                // times ran in the first instance.
                at += seconds{prev.from - civil};
                civil = prev.from;
            } else if (prev.from < prev.to && prev_at == t &&
                       cron.first_match(to_local(prev.from), to_local(prev.to))) {
                // The first instant after a gap stands for the local times
                // in the gap.
                return wall_time(duration_cast<wall_time::duration>(t));
            }
        }
        cctz::time_zone::civil_transition next;
        const bool has_next = tz.next_transition(tp, &next);
        const auto before = has_next ? to_local(next.from) : local_days(year{9999} / 12 / 31);
        if (const auto m = cron.first_match(to_local(civil), before)) {
            const auto found = at + (*m - to_local(civil));
            if (found > last_second) return std::nullopt;
            return wall_time(duration_cast<wall_time::duration>(found));
        }
        if (!has_next) return std::nullopt;
        t = tz.lookup(next.to).trans.time_since_epoch();
    }
    return std::nullopt;
}

std::optional<wall_time> recurrence::first(wall_time now) const {
    if (!spec_.run_now) return next_after(now - nanoseconds{1});
    auto at = wall_time(duration_cast<wall_time::duration>(ceil<milliseconds>(now.time_since_epoch())));
    if (spec_.start && at < *spec_.start)
        at = wall_time(duration_cast<wall_time::duration>(ceil<milliseconds>(spec_.start->time_since_epoch())));
    if (spec_.end && at > *spec_.end) return std::nullopt;
    return at;
}

}  // namespace tarry::periodic
