// read_schedule: every accepted encoding to the exact microsecond, every
// refusal and its reason, precedence, the default delay, the max_delay and
// expiration boundaries, the timestamp base, and no throw on random values.
#include "contract_test_support.hpp"
#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>

using namespace std::chrono_literals;
namespace wire = tarry::amqp::wire;
namespace contract = tarry::contract;
using contract::schedule_source;
using tarry::wall_time;

namespace {

constexpr std::int64_t arrival_us = 1767225600000000;  // 2026-01-01T00:00:00Z
constexpr double quiet_nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

using contract_test::arrival;
using contract_test::micros;
using contract_test::with;

// The schedule read, or a failed check showing the reason.
std::optional<contract::schedule> accepted(const wire::basic_properties& p, contract::schedule_rules r = {}) {
    auto res = contract::read_schedule(p, arrival, r);
    if (auto* no = std::get_if<contract::schedule_refusal>(&res)) {
        FAIL_CHECK("refused: " << no->reason);
        return std::nullopt;
    }
    return std::get<contract::schedule>(res);
}

// The refusal's reason, or a failed check showing the due time.
std::string refused(const wire::basic_properties& p, contract::schedule_rules r = {}) {
    auto res = contract::read_schedule(p, arrival, r);
    if (auto* no = std::get_if<contract::schedule_refusal>(&res)) return no->reason;
    FAIL_CHECK("accepted, due " << micros(std::get<contract::schedule>(res).due));
    return {};
}

bool starts(const std::string& s, std::string_view prefix) { return s.starts_with(prefix); }
bool has(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// The latest accepted time in µs, and as a decimal string of seconds.
std::int64_t latest_us() {
    const std::int64_t clock_end =
        std::chrono::floor<std::chrono::microseconds>(wall_time::max().time_since_epoch()).count();
    return std::min<std::int64_t>(253402300799000000, clock_end);
}
std::string seconds_text(std::int64_t us) {
    std::string frac = std::to_string(us % 1000000);
    return std::to_string(us / 1000000) + "." + std::string(6 - frac.size(), '0') + frac;
}

}  // namespace

TEST_CASE("perform_job_at: every numeric encoding gives the exact due time") {
    struct c {
        const char* what;
        wire::field_value v;
        std::int64_t us;
    };
    const c cases[] = {
        {"double", 1767225600.25, 1767225600250000},
        {"double, 1 µs (held just below)", 1767225600.000001, 1767225600000001},
        {"double just above 1 µs: rounded up", std::nextafter(1767225600.000001, inf), 1767225600000002},
        {"double in the past", 1.0, 1000000},
        {"double zero", 0.0, 0},
        {"double minus zero", -0.0, 0},
        {"float", 1024.5f, 1024500000},
        {"float at epoch scale", 1767225600.0f, 1767225600000000},
        {"int8", std::int8_t{7}, 7000000},
        {"uint8", std::uint8_t{255}, 255000000},
        {"int16", std::int16_t{32767}, 32767000000},
        {"uint16", std::uint16_t{65535}, 65535000000},
        {"int32", std::int32_t{1767225601}, 1767225601000000},
        {"uint32", std::uint32_t{4000000000u}, 4000000000000000},
        {"int64", std::int64_t{1767225602}, 1767225602000000},
        {"decimal", wire::decimal_value{2, 1767225}, 17672250000},      // 17672.25 s
        {"decimal, scale 0", wire::decimal_value{0, 1767225600}, arrival_us},
        {"decimal below a µs: rounded up", wire::decimal_value{7, 15}, 2},  // 1.5 µs
        {"decimal, scale 30", wire::decimal_value{30, 4294967295u}, 1},
        {"decimal, scale 30, zero", wire::decimal_value{30, 0}, 0},
        {"timestamp", wire::timestamp_value{1767225603}, 1767225603000000},
        {"numeric string", "1767225600.5", 1767225600500000},
        {"integer string", "1767225604", 1767225604000000},
        {"string below a µs: rounded up", "1767225600.0000001", 1767225600000001},
        {"string with leading zeros", "001767225600.250", 1767225600250000},
        {"string minus zero", "-0.000", 0},
        {"RFC 3339, Z", "2026-01-01T00:00:00Z", arrival_us},
        {"RFC 3339, offset", "2026-01-01T02:30:00+02:30", arrival_us},
        {"RFC 3339, fraction", "2026-01-01T00:00:00.125Z", 1767225600125000},
        {"RFC 3339, lower case", "2026-01-01t00:00:00.5z", 1767225600500000},
        {"RFC 3339, space", "2026-01-01 00:00:00Z", arrival_us},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        const auto s = accepted(with("perform_job_at", k.v));
        REQUIRE(s);
        CHECK(micros(s->due) == k.us);
        CHECK(s->source == schedule_source::perform_job_at);
    }
}

TEST_CASE("perform_job_at: each malformed value is refused with invalid-schedule and says why") {
    struct c {
        const char* what;
        wire::field_value v;
        const char* says;
    };
    const c cases[] = {
        {"bool", true, "is a boolean (true), not a number"},
        {"void", wire::void_value{}, "is void, not a number"},
        {"table", wire::field_table{{"a", 1}}, "is a table, not a number"},
        {"array", wire::field_array{1.0}, "is an array, not a number"},
        {"byte array", wire::byte_array{{1, 2}}, "is a byte array, not a number"},
        {"NaN", quiet_nan, "is NaN"},
        {"NaN float", std::numeric_limits<float>::quiet_NaN(), "is NaN"},
        {"+inf", inf, "is infinite (inf)"},
        {"-inf", -inf, "is infinite (-inf)"},
        {"+inf float", std::numeric_limits<float>::infinity(), "is infinite (inf)"},
        {"-inf float", -std::numeric_limits<float>::infinity(), "is infinite (-inf)"},
        {"negative double", -1.5, "-1.5 is negative"},
        {"negative int8", std::int8_t{-1}, "-1 is negative"},
        {"negative int32", std::int32_t{-10}, "-10 is negative"},
        {"negative int64", std::numeric_limits<std::int64_t>::min(), "-9223372036854775808 is negative"},
        {"negative string", "-5", "\"-5\" is negative"},
        {"negative fraction", "-0.000001", "\"-0.000001\" is negative"},
        {"year 10000", 253402300800.0, "253402300800 is after the latest supported time"},
        {"largest int64", std::numeric_limits<std::int64_t>::max(), "is after the latest supported time"},
        {"largest timestamp", wire::timestamp_value{~std::uint64_t{0}}, "is after the latest supported time"},
        {"huge string", "99999999999999999999999", "is after the latest supported time"},
        {"largest double", std::numeric_limits<double>::max(), "is after the latest supported time"},
        {"leap second into 10000", "9999-12-31T23:59:60Z", "is after the latest supported time"},
        {"before 1970", "1969-12-31T23:59:59Z", "\"1969-12-31T23:59:59Z\" is before 1970"},
        {"decimal scale 31", wire::decimal_value{31, 1}, "is a decimal with scale 31 (at most 30)"},
        {"words", "next tuesday", "\"next tuesday\" is neither a number nor an RFC 3339 time"},
        {"empty", "", "\"\" is neither a number"},
        {"hex", "0x10", "\"0x10\" is neither"},
        {"leading space", " 12", "\" 12\" is neither"},
        {"trailing space", "12 ", "\"12 \" is neither"},
        {"exponent", "1.7e9", "\"1.7e9\" is neither"},
        {"plus sign", "+5", "\"+5\" is neither"},
        {"no fraction digits", "1.", "\"1.\" is neither"},
        {"no integer digits", ".5", "\".5\" is neither"},
        {"inf text", "inf", "\"inf\" is neither"},
        {"nan text", "nan", "\"nan\" is neither"},
        {"bad date", "2026-02-30T00:00:00Z", "\"2026-02-30T00:00:00Z\" is neither"},
        {"other bytes", std::string("a\x01\"\\b\xff"), "\"a\\x01\\x22\\x5cb\\xff\" is neither"},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        const auto why = refused(with("perform_job_at", k.v));
        CHECK_MESSAGE(starts(why, "invalid-schedule: perform_job_at "), why);
        CHECK_MESSAGE(has(why, k.says), why);
    }
}

TEST_CASE("perform_job_at: a long string is quoted cut short") {
    const auto why = refused(with("perform_job_at", std::string(1000, 'z')));
    CHECK(why == "invalid-schedule: perform_job_at \"" + std::string(64, 'z') +
                     "...\" is neither a number nor an RFC 3339 time");
}

TEST_CASE("perform_job_at: the latest supported time is accepted, a microsecond later is not") {
    const std::int64_t last = latest_us();
    const auto s = accepted(with("perform_job_at", seconds_text(last)));
    REQUIRE(s);
    CHECK(micros(s->due) == last);
    const auto why = refused(with("perform_job_at", seconds_text(last + 1)));
    CHECK(starts(why, "invalid-schedule: perform_job_at \"" + seconds_text(last + 1) +
                          "\" is after the latest supported time, "));
}

TEST_CASE("x-delay: every numeric encoding, counted from arrival") {
    struct c {
        const char* what;
        wire::field_value v;
        std::int64_t us;  // after arrival
    };
    const c cases[] = {
        {"int8", std::int8_t{127}, 127000},
        {"uint8", std::uint8_t{200}, 200000},
        {"int16", std::int16_t{1500}, 1500000},
        {"uint16", std::uint16_t{60000}, 60000000},
        {"int32", std::int32_t{1500}, 1500000},
        {"uint32", std::uint32_t{4000000000u}, 4000000000000},
        {"int64", std::int64_t{86400000}, 86400000000},
        {"zero", std::int32_t{0}, 0},
        {"float", 2.5f, 2500},
        {"double", 2.5, 2500},
        {"double below a µs: rounded up", 0.0001, 1},
        {"double a hair above 50 µs: the product's rounding is kept", 0.05, 50},
        {"decimal", wire::decimal_value{1, 25}, 2500},
        {"decimal below a µs: rounded up", wire::decimal_value{4, 1}, 1},
        {"numeric string", "2.5", 2500},
        {"integer string", "1500", 1500000},
        {"100 years exactly", std::int64_t{3155760000000}, 3155760000000000},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        const auto s = accepted(with("x-delay", k.v));
        REQUIRE(s);
        CHECK(micros(s->due) == arrival_us + k.us);
        CHECK(s->source == schedule_source::x_delay);
    }
}

TEST_CASE("x-delay: counted from the timestamp property when it is set") {
    auto p = with("x-delay", std::int32_t{1500});
    p.timestamp = 1767225500;  // 100 s before arrival
    auto s = accepted(p);
    REQUIRE(s);
    CHECK(micros(s->due) == 1767225501500000);
    p.timestamp = 1767225700;  // after arrival (clock skew): still the base
    s = accepted(p);
    REQUIRE(s);
    CHECK(micros(s->due) == 1767225701500000);
    p.timestamp = std::numeric_limits<std::uint64_t>::max();  // past the latest time: ignored
    s = accepted(p);
    REQUIRE(s);
    CHECK(micros(s->due) == arrival_us + 1500000);
}

TEST_CASE("x-delay: each malformed value is refused with invalid-schedule and says why") {
    struct c {
        const char* what;
        wire::field_value v;
        const char* says;
    };
    const c cases[] = {
        {"negative int", std::int32_t{-1}, "-1 is negative"},
        {"negative double", -0.5, "-0.5 is negative"},
        {"negative string", "-1", "\"-1\" is negative"},
        {"NaN", quiet_nan, "is NaN"},
        {"NaN float", std::numeric_limits<float>::quiet_NaN(), "is NaN"},
        {"infinity", inf, "is infinite (inf)"},
        {"-infinity", -inf, "is infinite (-inf)"},
        {"-infinity float", -std::numeric_limits<float>::infinity(), "is infinite (-inf)"},
        {"words", "soon", "\"soon\" is not a number"},
        {"RFC 3339", "2026-01-01T00:00:00Z", "is not a number"},
        {"bool", false, "is a boolean (false), not a number"},
        {"timestamp", wire::timestamp_value{5}, "is a timestamp (5), not a number"},
        {"table", wire::field_table{}, "is a table, not a number"},
        {"decimal scale 200", wire::decimal_value{200, 1}, "scale 200 (at most 30)"},
        {"over 100 years", std::int64_t{3155760000001}, "3155760000001 ms is over 100 years"},
        {"1e20", 1e20, "1e+20 ms is over 100 years"},
    };
    for (const auto& k : cases) {
        CAPTURE(k.what);
        const auto why = refused(with("x-delay", k.v));
        CHECK_MESSAGE(starts(why, "invalid-schedule: x-delay "), why);
        CHECK_MESSAGE(has(why, k.says), why);
    }
}

TEST_CASE("x-delay: a sum past the latest supported time is refused") {
    auto p = with("x-delay", std::int64_t{3155760000000});  // 100 years
    p.timestamp = static_cast<std::uint64_t>(latest_us() / 1000000);
    const auto why = refused(p);
    CHECK(starts(why, "invalid-schedule: x-delay 3155760000000 ms from timestamp "));
    CHECK(has(why, "ends after the latest supported time"));
}

TEST_CASE("perform_job_at wins over x-delay, and its own fault is the reason") {
    auto p = with("perform_job_at", 1767225700.0);
    p.headers->set("x-delay", std::int32_t{5});
    auto s = accepted(p);
    REQUIRE(s);
    CHECK(micros(s->due) == 1767225700000000);
    CHECK(s->source == schedule_source::perform_job_at);
    p.headers->set("x-delay", "garbage");  // ignored beside a good perform_job_at
    CHECK(accepted(p));
    p.headers->set("x-delay", std::int32_t{5});
    p.headers->set("perform_job_at", true);  // a good x-delay does not rescue it
    CHECK(starts(refused(p), "invalid-schedule: perform_job_at is a boolean"));
}

TEST_CASE("no schedule header: the default delay from arrival") {
    wire::basic_properties p;
    auto s = accepted(p);
    REQUIRE(s);
    CHECK(s->due == arrival);
    CHECK(s->source == schedule_source::default_delay);
    s = accepted(p, {2500ms, std::nullopt});
    REQUIRE(s);
    CHECK(micros(s->due) == arrival_us + 2500000);
    p.headers = wire::field_table{{"other", 1}};
    p.timestamp = 1767225000;  // not the base of the default delay
    s = accepted(p, {10ms, std::nullopt});
    REQUIRE(s);
    CHECK(micros(s->due) == arrival_us + 10000);
    CHECK(s->source == schedule_source::default_delay);
}

TEST_CASE("no schedule header: a default delay past the latest supported time is refused") {
    const auto res = contract::read_schedule({}, wall_time::max(), {1ms, std::nullopt});
    REQUIRE(std::holds_alternative<contract::schedule_refusal>(res));
    CHECK(starts(std::get<contract::schedule_refusal>(res).reason, "invalid-schedule: the default delay 1 ms"));
    const auto huge = contract::read_schedule({}, arrival, {std::chrono::milliseconds::max(), std::nullopt});
    CHECK(std::holds_alternative<contract::schedule_refusal>(huge));
}

TEST_CASE("max_delay: equal is accepted, beyond is refused with delay-exceeds-max") {
    const contract::schedule_rules rules{0ms, 60000ms};
    CHECK(accepted(with("x-delay", std::int32_t{60000}), rules));
    CHECK(refused(with("x-delay", std::int32_t{60001}), rules) ==
          "delay-exceeds-max: due in 60001 ms, max 60000 ms (x-delay 60001)");
    // A fraction of a millisecond beyond counts as beyond.
    CHECK(refused(with("x-delay", 60000.001), rules) ==
          "delay-exceeds-max: due in 60001 ms, max 60000 ms (x-delay 60000.001)");
    const auto far = refused(with("perform_job_at", "2026-01-01T01:00:00Z"), rules);
    CHECK(far == "delay-exceeds-max: due in 3600000 ms, max 60000 ms "
                 "(perform_job_at \"2026-01-01T01:00:00Z\")");
    CHECK(refused({}, {60001ms, 60000ms}) ==
          "delay-exceeds-max: due in 60001 ms, max 60000 ms (default delay 60001 ms)");
    CHECK(accepted({}, {60000ms, 60000ms}));
    // A due time in the past is never too far.
    CHECK(accepted(with("perform_job_at", 1.0), rules));
}

TEST_CASE("max_delay: counted from arrival, to the nanosecond") {
    const contract::schedule_rules rules{0ms, 60000ms};
    auto p = with("x-delay", std::int32_t{70000});
    p.timestamp = 1767225580;  // 20 s before arrival: due 50 s after arrival
    CHECK(accepted(p, rules));
    const wall_time late = arrival + 300ns;  // 60 s after it is 59999.9997 ms away
    auto res = contract::read_schedule(with("perform_job_at", 1767225660.0), late, rules);
    CHECK(std::holds_alternative<contract::schedule>(res));
    res = contract::read_schedule(with("perform_job_at", "1767225660.000001"), late, rules);
    REQUIRE(std::holds_alternative<contract::schedule_refusal>(res));
    CHECK(starts(std::get<contract::schedule_refusal>(res).reason, "delay-exceeds-max: due in 60001 ms"));
}

TEST_CASE("expiration: ending exactly at the due time is accepted, before it is refused") {
    auto p = with("x-delay", std::int32_t{5000});
    p.expiration = "5000";
    CHECK(accepted(p));
    p.expiration = "4999";
    CHECK(refused(p) ==
          "expired-before-due: expires 2026-01-01T00:00:04.999Z (expiration \"4999\" ms from arrival "
          "2026-01-01T00:00:00Z), before due 2026-01-01T00:00:05Z (x-delay 5000)");
    wire::basic_properties none;
    none.expiration = "0";
    CHECK(accepted(none));  // due at arrival, expires at arrival
    CHECK(starts(refused(none, {1ms, std::nullopt}), "expired-before-due: expires 2026-01-01T00:00:00Z"));
}

TEST_CASE("expiration: counted from the timestamp property when it is set") {
    auto p = with("x-delay", std::int32_t{5000});
    p.timestamp = 1767225590;  // 10 s before arrival: due at -5 s
    p.expiration = "5000";     // expires at -5 s
    CHECK(accepted(p));
    p.expiration = "4999";
    const auto why = refused(p);
    CHECK(starts(why, "expired-before-due: expires 2025-12-31T23:59:54.999Z (expiration \"4999\" ms from "
                      "timestamp 2025-12-31T23:59:50Z), before due 2025-12-31T23:59:55Z"));
    // perform_job_at is absolute, but its expiration still counts from the timestamp.
    auto q = with("perform_job_at", 1767225600.0);
    q.timestamp = 1767225590;
    q.expiration = "9999";
    CHECK(starts(refused(q), "expired-before-due: "));
    q.expiration = "10000";
    CHECK(accepted(q));
}

TEST_CASE("expiration: a malformed or huge value is not a refusal") {
    auto p = with("x-delay", std::int32_t{5000});
    for (const char* e : {"", "soon", "-1", "1.5", " 10", "1:", "1a", "99999999999999999999999999"}) {
        CAPTURE(e);
        p.expiration = e;
        CHECK(accepted(p));
    }
}

TEST_CASE("checks run in order: schedule, then max_delay, then expiration") {
    auto p = with("perform_job_at", "soon");
    p.expiration = "1";
    CHECK(starts(refused(p, {0ms, 1ms}), "invalid-schedule: "));
    p.headers->set("perform_job_at", 1767225700.0);
    CHECK(starts(refused(p, {0ms, 1ms}), "delay-exceeds-max: "));
    CHECK(starts(refused(p), "expired-before-due: "));
}

TEST_CASE("arbitrary values and rules never throw and always answer") {
    std::mt19937_64 rng(20261122);
    const auto pick = [&](std::uint64_t n) { return rng() % n; };
    auto random_string = [&] {
        static constexpr char alphabet[] = "0123456789-+:.TtZz eE\x01\xff";
        std::string s(pick(40), ' ');
        for (auto& ch : s) ch = alphabet[pick(sizeof alphabet - 1)];
        if (pick(4) == 0) s = "2026-01-" + std::to_string(pick(40)) + "T" + std::to_string(pick(30)) + ":00:60Z";
        return s;
    };
    auto random_value = [&]() -> wire::field_value {
        const double d = std::bit_cast<double>(rng());
        switch (pick(13)) {
            case 0: return d;
            case 1: return static_cast<float>(d);
            case 2: return static_cast<std::int64_t>(rng());
            case 3: return static_cast<std::uint32_t>(rng());
            case 4: return wire::decimal_value{static_cast<std::uint8_t>(rng()), static_cast<std::uint32_t>(rng())};
            case 5: return wire::timestamp_value{rng()};
            case 6: return std::to_string(d);
            case 7: return random_string();
            case 8: return static_cast<std::int8_t>(rng());
            case 9: return static_cast<bool>(rng() & 1);
            case 10: return std::fmod(std::abs(d), 1e13);
            case 11: return static_cast<std::uint16_t>(rng());
            default: return wire::void_value{};
        }
    };
    const wall_time arrivals[] = {arrival, wall_time::min(), wall_time::max(), wall_time{}};
    for (int i = 0; i < 20000; ++i) {
        auto p = with(pick(2) ? "perform_job_at" : "x-delay", random_value());
        if (pick(4) == 0) p.headers->set(pick(2) ? "perform_job_at" : "x-delay", random_value());
        if (pick(3) == 0) p.expiration = pick(2) ? std::to_string(rng()) : random_string();
        if (pick(3) == 0) p.timestamp = pick(2) ? rng() : rng() % 20000000000;
        contract::schedule_rules rules;
        if (pick(2)) rules.default_delay = std::chrono::milliseconds(static_cast<std::int64_t>(rng()) >> pick(64));
        if (pick(2)) rules.max_delay = std::chrono::milliseconds(static_cast<std::int64_t>(rng()) >> pick(64));
        const wall_time at = arrivals[pick(4)];
        contract::schedule_result r;
        CHECK_NOTHROW(r = contract::read_schedule(p, at, rules));
        if (auto* no = std::get_if<contract::schedule_refusal>(&r)) {
            CHECK_MESSAGE((starts(no->reason, "invalid-schedule: ") || starts(no->reason, "delay-exceeds-max: ") ||
                           starts(no->reason, "expired-before-due: ")),
                          no->reason);
        } else if (std::get<contract::schedule>(r).source == schedule_source::perform_job_at) {
            const auto due = micros(std::get<contract::schedule>(r).due);
            CHECK(due >= 0);
            CHECK(due <= latest_us());
        }
    }
}
