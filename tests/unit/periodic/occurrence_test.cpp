// Occurrences: the nominal time as text, the message_id, what on_release
// decides under each misfire policy, and a spec's one-line text.
#include "periodic_test.hpp"

#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <variant>
#include <vector>

using namespace std::chrono_literals;
namespace periodic = tarry::periodic;
using periodic::errc;
using periodic::format_nominal;
using periodic::misfire_policy;
using periodic::parse_nominal;
using periodic_test::at_ms;
using periodic_test::compile;
using periodic_test::every_spec;
using periodic_test::utc;
using tarry::wall_time;

namespace {

// 1795500000 s is 2026-11-24T06:00:00Z, a whole minute (`date -u -d @1795500000`).
const wall_time nominal = at_ms(1795500000000);

periodic::schedule_spec every_minute(misfire_policy policy) {
    auto spec = every_spec(60'000);
    spec.misfire = policy;
    return spec;
}

}  // namespace

// --- the nominal time as text ---

TEST_CASE("format_nominal: epoch seconds, up to 3 fraction digits, no trailing zeros") {
    CHECK(format_nominal(at_ms(1795500000000)) == "1795500000");
    CHECK(format_nominal(at_ms(1795500000250)) == "1795500000.25");
    CHECK(format_nominal(at_ms(1795500000125)) == "1795500000.125");
    CHECK(format_nominal(at_ms(1795500000100)) == "1795500000.1");
    CHECK(format_nominal(at_ms(1795500000001)) == "1795500000.001");
    CHECK(format_nominal(at_ms(1795500000010)) == "1795500000.01");
    CHECK(format_nominal(at_ms(0)) == "0");
    CHECK(format_nominal(at_ms(5)) == "0.005");
}

TEST_CASE("format_nominal drops sub-millisecond parts") {
    CHECK(format_nominal(at_ms(1795500000000) + 1'234'567ns) == "1795500000.001");
    CHECK(format_nominal(at_ms(1795500000000) + 999'999ns) == "1795500000");
    CHECK(format_nominal(at_ms(1795500000250) + 1ns) == "1795500000.25");
}

TEST_CASE("format_nominal writes a time before 1970 with a leading '-'") {
    CHECK(format_nominal(at_ms(-1000)) == "-1");
    CHECK(format_nominal(at_ms(-1500)) == "-1.5");
    CHECK(format_nominal(at_ms(-250)) == "-0.25");
    CHECK(format_nominal(at_ms(-86'400'000)) == "-86400");
}

TEST_CASE("parse_nominal reads format_nominal's text back") {
    CHECK(parse_nominal("1795500000") == at_ms(1795500000000));
    CHECK(parse_nominal("1795500000.25") == at_ms(1795500000250));
    CHECK(parse_nominal("1795500000.125") == at_ms(1795500000125));
    CHECK(parse_nominal("1795500000.1") == at_ms(1795500000100));
    CHECK(parse_nominal("1795500000.001") == at_ms(1795500000001));
    CHECK(parse_nominal("0") == at_ms(0));
    CHECK(parse_nominal("-1.5") == at_ms(-1500));
    CHECK(parse_nominal("-0.25") == at_ms(-250));
    for (std::int64_t ms : {std::int64_t{0}, std::int64_t{1}, std::int64_t{999}, std::int64_t{1000},
                            std::int64_t{1795500000000}, std::int64_t{1795500000250}, std::int64_t{1795500000125},
                            std::int64_t{1795500000007}, std::int64_t{-1}, std::int64_t{-1500},
                            std::int64_t{-86'400'001}, std::int64_t{9'000'000'000'123}}) {
        CAPTURE(ms);
        const auto text = format_nominal(at_ms(ms));
        CAPTURE(text);
        CHECK(parse_nominal(text) == at_ms(ms));
    }
}

TEST_CASE("parse_nominal refuses any other text") {
    for (const std::string text :
         {"", ".", "-", "+1", "+1795500000", "--1", "1-", "1.", "1795500000.", ".5", "-.5", "1.1234", "1795500000.2500",
          "1.50", "1.0", "1.00", "1.120", "1234567890123456", "-1234567890123456", "1e3", "0x10", " 1", "1 ", "1a",
          "a", "1..5", "1.2.3", "1,5", "1.-5", "1.+5", "tick@1"}) {
        CAPTURE(text);
        CHECK_FALSE(parse_nominal(text).has_value());
    }
}

TEST_CASE("occurrence_id: the schedule id, '@', the nominal time") {
    CHECK(periodic::occurrence_id("tick", at_ms(1795500000000)) == "tick@1795500000");
    CHECK(periodic::occurrence_id("tick", at_ms(1795500000250)) == "tick@1795500000.25");
    CHECK(periodic::occurrence_id("reports.daily", utc(2026, 1, 1, 3)) == "reports.daily@1767236400");
    CHECK(periodic::occurrence_id("old", at_ms(-1500)) == "old@-1.5");
}

// --- on_release ---

TEST_CASE("on time: run it; the successor is the next nominal time after it, not after now") {
    for (auto policy : {misfire_policy::run_once, misfire_policy::skip, misfire_policy::catch_up}) {
        CAPTURE(static_cast<int>(policy));
        const auto r = compile(every_minute(policy));
        const auto d = periodic::on_release(r, nominal, 4, nominal + 10s);
        CHECK(d.run);
        CHECK_FALSE(d.misfired);
        CHECK(d.successor == nominal + 60s);
        CHECK(d.successor_number == 5);
        // Exactly the threshold late is still on time.
        const auto at_threshold = periodic::on_release(r, nominal, 4, nominal + 60s);
        CHECK(at_threshold.run);
        CHECK_FALSE(at_threshold.misfired);
        CHECK(at_threshold.successor == nominal + 60s);
        CHECK(at_threshold.successor_number == 5);
    }
}

TEST_CASE("the successor of an occurrence off the grid (run_now) is the next nominal time") {
    auto spec = every_spec(1000);
    spec.run_now = true;
    const auto r = compile(spec);
    const auto d = periodic::on_release(r, at_ms(1795500000321), 1, at_ms(1795500000400));
    CHECK(d.run);
    CHECK(d.successor == at_ms(1795500001000));
    CHECK(d.successor_number == 2);
}

TEST_CASE("a nominal time in the future counts as on time") {
    const auto r = compile(every_minute(misfire_policy::skip));
    const auto d = periodic::on_release(r, nominal, 1, nominal - 30s);
    CHECK(d.run);
    CHECK_FALSE(d.misfired);
    CHECK(d.successor == nominal + 60s);
    CHECK(d.successor_number == 2);
    const auto far = periodic::on_release(r, nominal, 1, nominal - 1h);
    CHECK(far.run);
    CHECK_FALSE(far.misfired);
    CHECK(far.successor == nominal + 60s);
}

TEST_CASE("the misfire threshold is the spec's") {
    auto spec = every_minute(misfire_policy::skip);
    spec.misfire_threshold = 1000ms;
    const auto r = compile(spec);
    CHECK_FALSE(periodic::on_release(r, nominal, 1, nominal + 1000ms).misfired);
    const auto d = periodic::on_release(r, nominal, 1, nominal + 1001ms);
    CHECK(d.misfired);
    CHECK_FALSE(d.run);
    CHECK(d.successor == nominal + 60s);
}

TEST_CASE("run_once: a misfired occurrence runs once and the chain continues after now") {
    const auto r = compile(every_minute(misfire_policy::run_once));
    const auto d = periodic::on_release(r, nominal, 3, nominal + 150s);
    CHECK(d.run);
    CHECK(d.misfired);
    CHECK(d.successor == nominal + 180s);
    CHECK(d.successor_number == 4);
    // now on a nominal time: the successor is strictly after it.
    const auto e = periodic::on_release(r, nominal, 3, nominal + 180s);
    CHECK(e.run);
    CHECK(e.misfired);
    CHECK(e.successor == nominal + 240s);
}

TEST_CASE("skip: a misfired occurrence does not run and the chain continues after now") {
    const auto r = compile(every_minute(misfire_policy::skip));
    const auto d = periodic::on_release(r, nominal, 3, nominal + 150s);
    CHECK_FALSE(d.run);
    CHECK(d.misfired);
    CHECK(d.successor == nominal + 180s);
    CHECK(d.successor_number == 4);
}

TEST_CASE("catch_up with fewer missed than the limit: run it and continue after it") {
    const auto r = compile(every_minute(misfire_policy::catch_up));  // catch_up_limit 10
    // [nominal, now] holds nominal, +60s, +120s: 3 occurrences.
    const auto d = periodic::on_release(r, nominal, 3, nominal + 150s);
    CHECK(d.run);
    CHECK(d.misfired);
    CHECK(d.successor == nominal + 60s);
    CHECK(d.successor_number == 4);
}

TEST_CASE("catch_up with exactly the limit missed: the oldest still runs") {
    auto spec = every_minute(misfire_policy::catch_up);
    spec.catch_up_limit = 3;
    const auto r = compile(spec);
    // [nominal, nominal + 120s] holds 3 occurrences: nominal is among the 3 latest.
    const auto d = periodic::on_release(r, nominal, 1, nominal + 120s);
    CHECK(d.run);
    CHECK(d.misfired);
    CHECK(d.successor == nominal + 60s);
    CHECK(d.successor_number == 2);
}

TEST_CASE("catch_up with more missed than the limit: skip to the first of the latest ones") {
    auto spec = every_minute(misfire_policy::catch_up);
    spec.catch_up_limit = 2;
    spec.misfire_threshold = 1000ms;
    const auto r = compile(spec);
    // [nominal, nominal + 300s] holds 6 occurrences; the 2 latest are +240s and +300s.
    const auto d = periodic::on_release(r, nominal, 1, nominal + 300s);
    CHECK_FALSE(d.run);
    CHECK(d.misfired);
    CHECK(d.successor == nominal + 240s);
    CHECK(d.successor_number == 2);
    // Then +240s (still misfired) runs and is followed by +300s, which is on time.
    const auto e = periodic::on_release(r, nominal + 240s, 2, nominal + 300s);
    CHECK(e.run);
    CHECK(e.misfired);
    CHECK(e.successor == nominal + 300s);
    CHECK(e.successor_number == 3);
    const auto f = periodic::on_release(r, nominal + 300s, 3, nominal + 300s + 500ms);
    CHECK(f.run);
    CHECK_FALSE(f.misfired);
    CHECK(f.successor == nominal + 360s);
    CHECK(f.successor_number == 4);
}

TEST_CASE("catch_up with many missed occurrences of a cron schedule") {
    periodic::schedule_spec spec;
    spec.when = periodic_test::cron("0 * * * *");
    spec.misfire = misfire_policy::catch_up;
    spec.catch_up_limit = 3;
    const auto r = compile(spec);
    // Hourly from 2026-01-01 00:00Z, found 2026-01-03 00:30Z: the 3 latest
    // in [nominal, now] are 2026-01-02 22:00Z, 23:00Z and 2026-01-03 00:00Z.
    const auto d = periodic::on_release(r, utc(2026, 1, 1), 1, utc(2026, 1, 3, 0, 30));
    CHECK_FALSE(d.run);
    CHECK(d.misfired);
    CHECK(d.successor == utc(2026, 1, 2, 22));
    CHECK(d.successor_number == 2);
}

TEST_CASE("the limit ends the chain") {
    for (auto policy : {misfire_policy::run_once, misfire_policy::skip, misfire_policy::catch_up}) {
        CAPTURE(static_cast<int>(policy));
        auto spec = every_minute(policy);
        spec.limit = 3;
        const auto r = compile(spec);
        const auto before_last = periodic::on_release(r, nominal, 2, nominal + 1s);
        CHECK(before_last.run);
        CHECK(before_last.successor == nominal + 60s);
        CHECK(before_last.successor_number == 3);
        const auto last = periodic::on_release(r, nominal, 3, nominal + 1s);
        CHECK(last.run);
        CHECK_FALSE(last.successor.has_value());
        // Misfired, the last one still has no successor.
        const auto late = periodic::on_release(r, nominal, 3, nominal + 150s);
        CHECK(late.misfired);
        CHECK_FALSE(late.successor.has_value());
    }
}

TEST_CASE("catch_up skipping over occurrences does not count them against the limit") {
    auto spec = every_minute(misfire_policy::catch_up);
    spec.catch_up_limit = 2;
    spec.limit = 2;
    const auto r = compile(spec);
    const auto d = periodic::on_release(r, nominal, 1, nominal + 300s);
    CHECK_FALSE(d.run);
    CHECK(d.successor == nominal + 240s);
    CHECK(d.successor_number == 2);
}

TEST_CASE("a successor past the end is none") {
    for (auto policy : {misfire_policy::run_once, misfire_policy::skip, misfire_policy::catch_up}) {
        CAPTURE(static_cast<int>(policy));
        auto spec = every_minute(policy);
        spec.end = nominal + 60s;
        const auto r = compile(spec);
        const auto d = periodic::on_release(r, nominal, 1, nominal + 1s);
        CHECK(d.run);
        CHECK(d.successor == nominal + 60s);
        const auto last = periodic::on_release(r, nominal + 60s, 2, nominal + 61s);
        CHECK(last.run);
        CHECK_FALSE(last.successor.has_value());
    }
    auto spec = every_minute(misfire_policy::run_once);
    spec.end = nominal + 120s;
    const auto r = compile(spec);
    const auto late = periodic::on_release(r, nominal, 1, nominal + 150s);
    CHECK(late.run);
    CHECK(late.misfired);
    CHECK_FALSE(late.successor.has_value());
}

// --- a spec as one line ---

namespace {

void check_same(const periodic::schedule_spec& a, const periodic::schedule_spec& b) {
    REQUIRE(a.when.index() == b.when.index());
    if (const auto* e = std::get_if<periodic::every_interval>(&a.when)) {
        CHECK(e->interval == std::get<periodic::every_interval>(b.when).interval);
        CHECK(e->offset == std::get<periodic::every_interval>(b.when).offset);
    } else {
        CHECK(std::get<periodic::cron_expression>(a.when).text() ==
              std::get<periodic::cron_expression>(b.when).text());
    }
    CHECK(a.time_zone == b.time_zone);
    CHECK(a.start == b.start);
    CHECK(a.end == b.end);
    CHECK(a.limit == b.limit);
    CHECK(a.run_now == b.run_now);
    CHECK(a.misfire == b.misfire);
    CHECK(a.misfire_threshold == b.misfire_threshold);
    if (a.misfire == misfire_policy::catch_up) CHECK(a.catch_up_limit == b.catch_up_limit);
}

periodic::schedule_spec cron_spec(const char* text, const char* zone) {
    periodic::schedule_spec spec;
    spec.when = periodic_test::cron(text);
    spec.time_zone = zone;
    return spec;
}

void check_spec_refused(const std::string& text, errc expected) {
    CAPTURE(text);
    const auto r = periodic::parse_spec(text);
    CHECK_FALSE(r.spec.has_value());
    CHECK(r.error == expected);
    CHECK_FALSE(r.detail.empty());
}

}  // namespace

TEST_CASE("to_string: the header's examples") {
    CHECK(periodic::to_string(every_spec(1000)) == "every 1000ms");
    CHECK(periodic::to_string(every_spec(60'000, 5'000)) == "every 60000ms+5000ms");
    CHECK(periodic::to_string(cron_spec("0 3 * * *", "Europe/Berlin")) == "cron 0 3 * * * tz Europe/Berlin");
    CHECK(periodic::to_string(cron_spec("0 3 * * *", "UTC")) == "cron 0 3 * * *");
}

TEST_CASE("to_string writes the optional parts that differ from the defaults, in order") {
    auto spec = every_spec(1000);
    spec.start = utc(2026, 1, 1);  // 1767225600 (`date -u -d 2026-01-01 +%s`)
    CHECK(periodic::to_string(spec) == "every 1000ms start 1767225600");
    spec = every_spec(1000);
    spec.end = at_ms(1795500000250);
    CHECK(periodic::to_string(spec) == "every 1000ms end 1795500000.25");
    spec = every_spec(1000);
    spec.limit = 5;
    CHECK(periodic::to_string(spec) == "every 1000ms limit 5");
    spec = every_spec(1000);
    spec.run_now = true;
    CHECK(periodic::to_string(spec) == "every 1000ms run-now");
    spec = every_spec(1000);
    spec.misfire = misfire_policy::skip;
    CHECK(periodic::to_string(spec) == "every 1000ms misfire skip");
    spec = every_spec(1000);
    spec.misfire = misfire_policy::catch_up;
    CHECK(periodic::to_string(spec) == "every 1000ms misfire catch-up 10");
    spec.catch_up_limit = 3;
    CHECK(periodic::to_string(spec) == "every 1000ms misfire catch-up 3");
    spec = every_spec(1000);
    spec.misfire_threshold = 5000ms;
    CHECK(periodic::to_string(spec) == "every 1000ms misfire-threshold 5000ms");

    auto all = cron_spec("30 2 * * *", "Europe/Berlin");
    all.start = utc(2026, 1, 1);
    all.end = at_ms(1798761600500);  // 2027-01-01T00:00:00.5Z
    all.limit = 5;
    all.run_now = true;
    all.misfire = misfire_policy::catch_up;
    all.catch_up_limit = 3;
    all.misfire_threshold = 5000ms;
    CHECK(periodic::to_string(all) == "cron 30 2 * * * tz Europe/Berlin start 1767225600 end 1798761600.5 limit 5 "
                                      "run-now misfire catch-up 3 misfire-threshold 5000ms");
}

TEST_CASE("parse_spec reads what to_string writes") {
    std::vector<periodic::schedule_spec> specs;
    specs.push_back(every_spec(1000));
    specs.push_back(every_spec(60'000, 5'000));
    specs.push_back(every_spec(1));
    specs.push_back(cron_spec("0 3 * * *", "Europe/Berlin"));
    specs.push_back(cron_spec("0 3 * * *", "UTC"));
    specs.push_back(cron_spec("15 */5 1-3 * JAN-MAR MON,fri", "America/New_York"));
    specs.push_back(cron_spec("@daily", "UTC"));
    {
        auto s = every_spec(3'600'000, 60'000);
        s.start = utc(2026, 1, 1);
        s.end = utc(2026, 12, 31, 23, 59, 59);
        s.limit = 100;
        s.run_now = true;
        s.misfire = misfire_policy::catch_up;
        s.catch_up_limit = 4;
        s.misfire_threshold = 5000ms;
        specs.push_back(s);
    }
    {
        auto s = cron_spec("30 2 * * *", "Europe/Berlin");
        s.start = utc(2026, 3, 1, 12, 30, 15);
        s.misfire = misfire_policy::skip;
        specs.push_back(s);
    }
    {
        auto s = every_spec(1000);
        s.end = utc(1969, 12, 31, 23, 59, 59);
        s.misfire_threshold = 0ms;
        specs.push_back(s);
    }
    for (const auto& spec : specs) {
        const auto text = periodic::to_string(spec);
        CAPTURE(text);
        const auto back = periodic::parse_spec(text);
        INFO("detail: ", back.detail);
        REQUIRE(back.spec.has_value());
        CHECK_FALSE(back.error);
        check_same(*back.spec, spec);
        CHECK(periodic::to_string(*back.spec) == text);
    }
}

TEST_CASE("parse_spec round-trips a start and an end with milliseconds") {
    auto s = every_spec(1000);
    s.start = at_ms(1795500000250);
    s.end = at_ms(1795500099001);
    const auto text = periodic::to_string(s);
    CAPTURE(text);
    const auto back = periodic::parse_spec(text);
    REQUIRE(back.spec.has_value());
    check_same(*back.spec, s);
}

TEST_CASE("parse_spec reads a start and an end in epoch seconds") {
    const auto r = periodic::parse_spec("every 1000ms start 1767225600 end 1795500000.25");
    INFO("detail: ", r.detail);
    REQUIRE(r.spec.has_value());
    CHECK(r.spec->start == std::optional<wall_time>(utc(2026, 1, 1)));
    CHECK(r.spec->end == std::optional<wall_time>(at_ms(1795500000250)));
    const auto cron_in_utc = periodic::parse_spec("cron 0 3 * * *");
    INFO("detail: ", cron_in_utc.detail);
    REQUIRE(cron_in_utc.spec.has_value());
    check_same(*cron_in_utc.spec, cron_spec("0 3 * * *", "UTC"));
}

TEST_CASE("parse_spec takes the optional parts in any order") {
    const auto a = periodic::parse_spec("every 1000ms misfire-threshold 5000ms run-now limit 5 misfire catch-up 3");
    INFO("detail: ", a.detail);
    REQUIRE(a.spec.has_value());
    auto expected = every_spec(1000);
    expected.misfire_threshold = 5000ms;
    expected.run_now = true;
    expected.limit = 5;
    expected.misfire = misfire_policy::catch_up;
    expected.catch_up_limit = 3;
    check_same(*a.spec, expected);
    CHECK(periodic::to_string(*a.spec) == "every 1000ms limit 5 run-now misfire catch-up 3 misfire-threshold 5000ms");

    const auto b = periodic::parse_spec("cron 0 3 * * * tz Europe/Berlin");
    REQUIRE(b.spec.has_value());
    check_same(*b.spec, cron_spec("0 3 * * *", "Europe/Berlin"));
    const auto c = periodic::parse_spec("cron 15 0 3 * * * tz America/New_York limit 2");
    REQUIRE(c.spec.has_value());
    auto six = cron_spec("15 0 3 * * *", "America/New_York");
    six.limit = 2;
    check_same(*c.spec, six);
}

TEST_CASE("parse_spec refuses text that is not a spec") {
    check_spec_refused("cron 0 25 * * * tz UTC", errc::invalid_cron);
    check_spec_refused("cron 0 0 30 2 * tz UTC", errc::invalid_cron);
    check_spec_refused("cron 0 3 * * tz UTC", errc::invalid_cron);
    check_spec_refused("cron 0 3 * * * * * tz UTC", errc::invalid_cron);
    check_spec_refused("every 1000ms limit x", errc::invalid_schedule);
    check_spec_refused("every 1000ms misfire sometimes", errc::invalid_schedule);
    check_spec_refused("every 1000ms start yesterday", errc::invalid_schedule);
    check_spec_refused("every 1000ms start 2026-01-01T00:00:00Z", errc::invalid_schedule);
    check_spec_refused("every 1000ms start 1.2345", errc::invalid_schedule);
    check_spec_refused("every 1000ms bogus", errc::invalid_schedule);
    check_spec_refused("every 1000ms limit", errc::invalid_schedule);
    check_spec_refused("every", errc::invalid_schedule);
    check_spec_refused("every ms", errc::invalid_schedule);
    check_spec_refused("every 1000", errc::invalid_schedule);
    check_spec_refused("hourly", errc::invalid_schedule);
    check_spec_refused("", errc::invalid_schedule);
}

TEST_CASE("parse_spec refuses a zone the tz database lacks") {
    // The header lists unknown_time_zone among parse_spec's errors.
    check_spec_refused("cron 0 3 * * * tz Mars/Olympus_Mons", errc::unknown_time_zone);
}

TEST_CASE("parse_spec refuses the values make_recurrence refuses") {
    // The header: parse_spec fails with invalid_schedule for "any other
    // field of a schedule_spec (interval, offset, start/end, limit)".
    check_spec_refused("every 0ms", errc::invalid_schedule);
    check_spec_refused("every -1000ms", errc::invalid_schedule);
    check_spec_refused("every 1000ms+1000ms", errc::invalid_schedule);
    check_spec_refused("every 1000ms limit 0", errc::invalid_schedule);
    check_spec_refused("every 1000ms misfire catch-up 0", errc::invalid_schedule);
    check_spec_refused("every 1000ms misfire-threshold -5ms", errc::invalid_schedule);
    check_spec_refused("every 1000ms start 1767312000 end 1767225600", errc::invalid_schedule);
}
