// `every` schedules: nominal times aligned to the Unix epoch (+ offset) in
// milliseconds, whatever the zone; what make_recurrence refuses; and the
// chain's first occurrence.
#include "periodic_test.hpp"

#include "tarry/periodic/recurrence.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <variant>

using namespace std::chrono_literals;
namespace periodic = tarry::periodic;
using periodic::errc;
using periodic_test::at_ms;
using periodic_test::compile;
using periodic_test::every_spec;
using periodic_test::utc;

namespace {

void check_refused(const periodic::schedule_spec& spec) {
    const auto r = periodic::make_recurrence(spec);
    CHECK_FALSE(r.schedule.has_value());
    CHECK(r.error == errc::invalid_schedule);
    CHECK_FALSE(r.detail.empty());
}

void check_accepted(const periodic::schedule_spec& spec) {
    const auto r = periodic::make_recurrence(spec);
    INFO("detail: ", r.detail);
    CHECK(r.schedule.has_value());
    CHECK_FALSE(r.error);
}

}  // namespace

TEST_CASE("every second: the next whole second strictly after") {
    const auto r = compile(every_spec(1000));
    CHECK(r.next_after(at_ms(1795500000500)) == at_ms(1795500001000));
    CHECK(r.next_after(at_ms(1795500001000)) == at_ms(1795500002000));
    CHECK(r.next_after(at_ms(1795500001000) - 1ns) == at_ms(1795500001000));
    CHECK(r.next_after(at_ms(0)) == at_ms(1000));
}

TEST_CASE("every minute with an offset: epoch + offset + k * interval") {
    // 1795500000 is a multiple of 60 (2026-11-24T06:00:00Z, `date -u -d @1795500000`).
    const auto r = compile(every_spec(60'000, 5'000));
    CHECK(r.next_after(at_ms(1795500000000)) == at_ms(1795500005000));
    CHECK(r.next_after(at_ms(1795500004999)) == at_ms(1795500005000));
    CHECK(r.next_after(at_ms(1795500005000)) == at_ms(1795500065000));
    CHECK(r.next_after(at_ms(1795500064999)) == at_ms(1795500065000));
}

TEST_CASE("intervals and offsets to the millisecond") {
    // 3 + 7k: ..., 94, 101, 108, ...
    const auto r = compile(every_spec(7, 3));
    CHECK(r.next_after(at_ms(100)) == at_ms(101));
    CHECK(r.next_after(at_ms(101)) == at_ms(108));
    CHECK(r.next_after(at_ms(100) + 999'999ns) == at_ms(101));
    CHECK(r.next_after(at_ms(101) - 1ns) == at_ms(101));
    CHECK(r.next_after(at_ms(101) + 1ns) == at_ms(108));
    CHECK(r.next_after(at_ms(2)) == at_ms(3));
    const auto ms = compile(every_spec(1));
    CHECK(ms.next_after(at_ms(1795500000000) + 1ns) == at_ms(1795500000001));
    CHECK(ms.next_after(at_ms(1795500000000)) == at_ms(1795500000001));
}

TEST_CASE("a long interval is aligned to the epoch, not to the day or week") {
    // 2026-01-01T00:00:00Z is 1767225600 s = 2922 weeks after the epoch
    // (a Thursday, like 1970-01-01).
    const auto weekly = compile(every_spec(604'800'000));
    CHECK(weekly.next_after(utc(2025, 12, 31)) == utc(2026, 1, 1));
    CHECK(weekly.next_after(utc(2026, 1, 1)) == utc(2026, 1, 8));
    // 7 hours: 1767225600 / 25200 = 70128 exactly, so 2026-01-01T00:00Z is
    // one, and the next is 07:00Z.
    const auto seven_hours = compile(every_spec(25'200'000));
    CHECK(seven_hours.next_after(utc(2026, 1, 1)) == utc(2026, 1, 1, 7));
    CHECK(seven_hours.next_after(utc(2026, 1, 1, 7)) == utc(2026, 1, 1, 14));
}

TEST_CASE("before 1970 the alignment holds too") {
    const auto r = compile(every_spec(1000));
    CHECK(r.next_after(at_ms(-1500)) == at_ms(-1000));
    CHECK(r.next_after(at_ms(-1000)) == at_ms(0));
    CHECK(r.next_after(at_ms(-1)) == at_ms(0));
    const auto o = compile(every_spec(1000, 250));
    CHECK(o.next_after(at_ms(-1)) == at_ms(250));
    CHECK(o.next_after(at_ms(-800)) == at_ms(-750));
    CHECK(o.next_after(at_ms(-750)) == at_ms(250));
}

TEST_CASE("an every schedule is in UTC: midnight UTC stays midnight UTC across any zone's changes") {
    const auto r = compile(every_spec(86'400'000));
    CHECK(r.next_after(utc(2026, 3, 28, 12)) == utc(2026, 3, 29));
    CHECK(r.next_after(utc(2026, 3, 7, 12)) == utc(2026, 3, 8));
    CHECK(r.next_after(utc(2026, 10, 25)) == utc(2026, 10, 26));
}

TEST_CASE("make_recurrence refuses a time zone other than UTC on an every schedule") {
    for (const std::string zone : {"Europe/Berlin", "America/New_York"}) {
        CAPTURE(zone);
        auto spec = every_spec(1000);
        spec.time_zone = zone;
        check_refused(spec);
    }
    auto spec = every_spec(1000);
    spec.time_zone = "UTC";
    check_accepted(spec);
}

TEST_CASE("next_after: nothing past what wall_time holds") {
    // wall_time (nanoseconds since 1970 in 64 bits) ends at
    // 2262-04-11T23:47:16.854775807Z.
    const auto r = compile(every_spec(1000));
    CHECK_FALSE(r.next_after(tarry::wall_time::max() - 500ms).has_value());
    CHECK(r.next_after(utc(2262, 4, 11, 23, 47, 14)) == utc(2262, 4, 11, 23, 47, 15));
    CHECK(r.next_after(utc(2262, 4, 11, 23, 47, 15)) == utc(2262, 4, 11, 23, 47, 16));
    CHECK_FALSE(r.next_after(utc(2262, 4, 11, 23, 47, 16)).has_value());
    CHECK_FALSE(compile(every_spec(86'400'000)).next_after(utc(2262, 4, 11)).has_value());
}

TEST_CASE("start and end bound an every schedule; the nominal times stay aligned") {
    auto spec = every_spec(1000);
    spec.start = at_ms(1795500000500);
    spec.end = at_ms(1795500003000);
    const auto r = compile(spec);
    CHECK(r.next_after(at_ms(0)) == at_ms(1795500001000));
    CHECK(r.next_after(at_ms(1795500001000)) == at_ms(1795500002000));
    CHECK(r.next_after(at_ms(1795500002000)) == at_ms(1795500003000));
    CHECK_FALSE(r.next_after(at_ms(1795500003000)).has_value());

    spec.start = at_ms(1795500001000);
    const auto s = compile(spec);
    CHECK(s.next_after(at_ms(0)) == at_ms(1795500001000));
}

TEST_CASE("make_recurrence refuses an interval of 0 or less") {
    check_refused(every_spec(0));
    check_refused(every_spec(-1000));
    check_refused(every_spec(-1));
    check_accepted(every_spec(1));
}

TEST_CASE("make_recurrence refuses an offset outside [0, interval)") {
    check_refused(every_spec(1000, -1));
    check_refused(every_spec(1000, 1000));
    check_refused(every_spec(1000, 5000));
    check_accepted(every_spec(1000, 0));
    check_accepted(every_spec(1000, 999));
}

TEST_CASE("make_recurrence refuses an end before the start") {
    auto spec = every_spec(1000);
    spec.start = utc(2026, 6, 2);
    spec.end = utc(2026, 6, 1);
    check_refused(spec);
    spec.end = utc(2026, 6, 2) - 1ms;
    check_refused(spec);
    spec.end = utc(2026, 6, 2);
    check_accepted(spec);
    spec.start.reset();
    check_accepted(spec);

    periodic::schedule_spec cron_spec;
    cron_spec.when = periodic_test::cron("0 3 * * *");
    cron_spec.start = utc(2026, 6, 2);
    cron_spec.end = utc(2026, 6, 1);
    check_refused(cron_spec);
}

TEST_CASE("make_recurrence refuses a limit or catch_up_limit of 0 and a negative misfire threshold") {
    auto spec = every_spec(1000);
    spec.limit = 0;
    check_refused(spec);
    spec.limit = 1;
    check_accepted(spec);

    spec = every_spec(1000);
    spec.catch_up_limit = 0;
    check_refused(spec);
    spec.misfire = periodic::misfire_policy::catch_up;
    check_refused(spec);
    spec.catch_up_limit = 1;
    check_accepted(spec);

    spec = every_spec(1000);
    spec.misfire_threshold = -1ms;
    check_refused(spec);
    spec.misfire_threshold = 0ms;
    check_accepted(spec);

    periodic::schedule_spec cron_spec;
    cron_spec.when = periodic_test::cron("0 3 * * *");
    cron_spec.limit = 0;
    check_refused(cron_spec);
}

TEST_CASE("the spec is kept as given") {
    auto spec = every_spec(60'000, 5'000);
    spec.limit = 7;
    spec.misfire = periodic::misfire_policy::skip;
    const auto r = compile(spec);
    const auto* e = std::get_if<periodic::every_interval>(&r.spec().when);
    REQUIRE(e);
    CHECK(e->interval == 60'000ms);
    CHECK(e->offset == 5'000ms);
    CHECK(r.spec().limit == std::optional<std::uint64_t>(7));
    CHECK(r.spec().misfire == periodic::misfire_policy::skip);
}

TEST_CASE("first without run_now: the first nominal time at or after now") {
    const auto r = compile(every_spec(1000));
    CHECK(r.first(at_ms(5000)) == at_ms(5000));
    CHECK(r.first(at_ms(5000) + 1ns) == at_ms(6000));
    CHECK(r.first(at_ms(4999)) == at_ms(5000));
    const auto c = periodic_test::cron_in("0 3 * * *");
    CHECK(c.first(utc(2026, 1, 1, 3)) == utc(2026, 1, 1, 3));
    CHECK(c.first(utc(2026, 1, 1, 3) + 1ms) == utc(2026, 1, 2, 3));
}

TEST_CASE("first with run_now: now itself, rounded up to the millisecond") {
    auto spec = every_spec(1000);
    spec.run_now = true;
    const auto r = compile(spec);
    CHECK(r.first(at_ms(4321)) == at_ms(4321));
    CHECK(r.first(at_ms(5000) + 1ns) == at_ms(5001));
    CHECK(r.first(at_ms(4321) + 500us) == at_ms(4322));
    CHECK(r.first(at_ms(4321) + 999'999ns) == at_ms(4322));
    // Later occurrences follow the schedule.
    CHECK(r.next_after(at_ms(4321)) == at_ms(5000));
}

TEST_CASE("first with a start: never before it") {
    auto spec = every_spec(1000);
    spec.start = at_ms(2500);
    const auto r = compile(spec);
    CHECK(r.first(at_ms(1000)) == at_ms(3000));
    CHECK(r.first(at_ms(2700)) == at_ms(3000));
    CHECK(r.first(at_ms(3000)) == at_ms(3000));
    CHECK(r.first(at_ms(3001)) == at_ms(4000));

    spec.run_now = true;
    const auto n = compile(spec);
    CHECK(n.first(at_ms(1000)) == at_ms(2500));
    CHECK(n.first(at_ms(2700)) == at_ms(2700));

    spec.run_now = false;
    spec.start = at_ms(3000);
    CHECK(compile(spec).first(at_ms(1000)) == at_ms(3000));
}

TEST_CASE("first after the end: nothing") {
    auto spec = every_spec(1000);
    spec.end = at_ms(5000);
    const auto r = compile(spec);
    CHECK(r.first(at_ms(5000)) == at_ms(5000));
    CHECK_FALSE(r.first(at_ms(5001)).has_value());
}
