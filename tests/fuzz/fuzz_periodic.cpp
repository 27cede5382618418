// Fuzz target: the periodic layer's parsers and its next-occurrence walk
// (tarry/periodic/: parse_cron, parse_spec, to_string, make_recurrence,
// recurrence::next_after, format_nominal / parse_nominal).
//
// Input layout:
//   bytes 0-3  a start instant: a signed 32-bit count of minutes, modulo
//              200 years, around 2026-01-01T00:00:00Z, big-endian
//   byte 4     bit 0: the rest is a whole schedule spec (parse_spec), else
//              a bare cron expression (parse_cron, then in UTC); bits 1-7:
//              how many occurrences to walk (0-127)
//   the rest   the text
//
// Properties, each one the headers state:
// - nothing throws on any text; a refusal has an error code of the
//   periodic category and a detail;
// - an accepted spec prints (to_string) as a line that parses again to a
//   spec printing the same line;
// - make_recurrence refuses with a detail or compiles; the walk from the
//   start instant is strictly increasing, within [start, end], and an
//   every schedule's times sit on its grid (offset + k * interval);
// - a cron schedule in UTC: each occurrence's civil time matches the
//   expression, and no second between two occurrences does (checked by
//   first_match over the gap, which must find the later one);
// - every occurrence's nominal text reads back to the same instant.
#include "fuzz_support.hpp"

#include "tarry/periodic/error.hpp"
#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace {

using namespace std::chrono;
using tarry::wall_time;
namespace periodic = tarry::periodic;
using tarry_fuzz::check;

template <class Result>
void check_refusal(const Result& r, const char* what) {
    check(r.error.category() == periodic::periodic_category() && !r.detail.empty(), what, r.detail);
}

periodic::civil_seconds utc_civil(wall_time t) {
    return periodic::civil_seconds(floor<seconds>(t.time_since_epoch()));
}

void walk(const periodic::recurrence& r, wall_time from, unsigned steps) {
    const auto& spec = r.spec();
    const auto* cron = std::get_if<periodic::cron_expression>(&spec.when);
    const bool utc_cron = cron != nullptr && spec.time_zone == "UTC";
    auto at = from;
    for (unsigned i = 0; i < steps; ++i) {
        const auto next = r.next_after(at);
        if (!next) return;
        check(*next > at, "next_after is not strictly after its argument");
        check(!spec.start || *next >= *spec.start, "an occurrence before the start");
        check(!spec.end || *next <= *spec.end, "an occurrence after the end");
        check(periodic::parse_nominal(periodic::format_nominal(*next)) == *next,
              "a nominal time does not read back", periodic::format_nominal(*next));
        if (const auto* e = std::get_if<periodic::every_interval>(&spec.when)) {
            const auto ms = duration_cast<milliseconds>(next->time_since_epoch());
            check(milliseconds{ms - e->offset} % e->interval == milliseconds{0}, "an every occurrence off its grid");
        }
        if (utc_cron) {
            check(cron->matches(utc_civil(*next)), "a UTC cron occurrence that does not match",
                  periodic::format_nominal(*next));
            if (i > 0) {
                // No match strictly between the previous occurrence and this one.
                const auto between = cron->first_match(utc_civil(at) + seconds{1}, utc_civil(*next) + seconds{1});
                check(between == utc_civil(*next), "a UTC cron match skipped", periodic::format_nominal(*next));
            }
        }
        at = *next;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 5) return 0;
    const auto minutes_off = static_cast<std::int32_t>(std::uint32_t{data[0]} << 24 | std::uint32_t{data[1]} << 16 |
                                                       std::uint32_t{data[2]} << 8 | data[3]);
    const wall_time from = wall_time(seconds{1767225600}) + minutes{minutes_off % (200 * 525960)};
    const bool whole_spec = (data[4] & 1) != 0;
    const unsigned steps = data[4] >> 1;
    const std::string_view text(reinterpret_cast<const char*>(data + 5), size - 5);

    periodic::schedule_spec spec;
    if (whole_spec) {
        auto parsed = periodic::parse_spec(text);
        if (!parsed.spec) {
            check_refusal(parsed, "a refused spec without a periodic error and a detail");
            return 0;
        }
        const auto line = periodic::to_string(*parsed.spec);
        const auto again = periodic::parse_spec(line);
        check(again.spec.has_value(), "a printed spec does not parse", line + " / " + again.detail);
        check(periodic::to_string(*again.spec) == line, "a printed spec prints differently", line);
        spec = std::move(*parsed.spec);
    } else {
        auto parsed = periodic::parse_cron(text);
        if (!parsed.expression) {
            check_refusal(parsed, "a refused cron without a periodic error and a detail");
            return 0;
        }
        check(periodic::parse_cron(parsed.expression->text()).expression.has_value(),
              "a cron's normalized text does not parse", parsed.expression->text());
        spec.when = std::move(*parsed.expression);
    }
    const auto compiled = periodic::make_recurrence(spec);
    if (!compiled.schedule) {
        check_refusal(compiled, "a refused recurrence without a periodic error and a detail");
        return 0;
    }
    walk(*compiled.schedule, from, steps);
    return 0;
}
