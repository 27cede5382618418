// parse_rfc3339: exact instants for every accepted form, and nothing for
// every malformed or out-of-range date-time.
#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

#include <string>
#include <type_traits>

using tarry::wall_time;
using tarry::contract::parse_rfc3339;

namespace {

std::int64_t micros(wall_time t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

TEST_CASE("parse_rfc3339: each accepted form gives the exact instant") {
    struct c {
        const char* text;
        std::int64_t us;
    };
    const c cases[] = {
        {"2026-01-01T00:00:00Z", 1767225600000000},
        {"2026-01-01t00:00:00z", 1767225600000000},            // lower case
        {"2026-01-01 00:00:00Z", 1767225600000000},            // space for T
        {"2026-01-01T02:30:00+02:30", 1767225600000000},       // offset east
        {"2025-12-31T23:00:00-01:00", 1767225600000000},       // offset west
        {"2026-01-01T00:00:00-00:00", 1767225600000000},       // unknown local offset
        {"2026-01-01T00:00:00+23:59", 1767139260000000},       // largest offsets
        {"2026-01-01T00:00:00-23:59", 1767311940000000},
        {"2026-11-22t10:00:00.125+02:00", 1795334400125000},   // the header's example
        {"2026-01-01T00:00:00.5Z", 1767225600500000},          // one fraction digit
        {"2026-01-01T00:00:00.123456Z", 1767225600123456},     // exactly µs
        {"2026-01-01T00:00:00.1234560000Z", 1767225600123456}, // zeros below µs: not rounded
        {"2026-01-01T00:00:00.1234561Z", 1767225600123457},    // below µs: rounded up
        {"2026-01-01T00:00:00.9999991Z", 1767225601000000},    // rounds up into the next second
        {"2024-02-29T12:00:00Z", 1709208000000000},            // leap day
        {"2000-02-29T00:00:00Z", 951782400000000},             // leap day of a 400th year
        {"2026-06-30T23:59:59Z", 1782863999000000},            // day 30 of a 30-day month
        {"2016-12-31T23:59:60Z", 1483228800000000},            // leap second: the next minute
        {"1970-01-01T00:00:00Z", 0},
        {"1969-12-31T23:59:59Z", -1000000},                    // before 1970 still parses
    };
    for (const auto& k : cases) {
        CAPTURE(k.text);
        const auto t = parse_rfc3339(k.text);
        REQUIRE(t);
        CHECK(micros(*t) == k.us);
    }
}

TEST_CASE("parse_rfc3339: malformed or out-of-range fields give nothing") {
    for (const char* bad : {
             "2026-02-29T00:00:00Z",  // not a leap year
             "2100-02-29T00:00:00Z",  // a century that is not a leap year
             "2026-04-31T00:00:00Z",  // 30-day month
             "2026-02-30T00:00:00Z",
             "2026-13-01T00:00:00Z",
             "2026-00-01T00:00:00Z",
             "2026-01-00T00:00:00Z",
             "2026-01-32T00:00:00Z",
             "2026-01-01T24:00:00Z",
             "2026-01-01T00:60:00Z",
             "2026-01-01T00:00:61Z",
             "2026-01-01T00:00:00",        // no zone
             "2026-01-01T00:00:00.5",      // no zone after a fraction
             "2026-01-01T00:00:00.Z",      // empty fraction
             "2026-01-01T00:00:00,5Z",     // comma fraction
             "2026-01-01T00:00:00+2:00",   // one-digit hour
             "2026-01-01T00:00:00+0200",   // no colon
             "2026-01-01T00:00:00+24:00",  // offset hour out of range
             "2026-01-01T00:00:00+01:60",  // offset minute out of range
             "2026-01-01T00:00:00+01:00:00",
             "2026-01-01T00:00:00Zjunk",
             "2026-01-01T00:00:00 Z",
             " 2026-01-01T00:00:00Z",
             "2026-01-01T00:00:00Z ",
             "2026-01-01_00:00:00Z",
             "2026/01/01T00:00:00Z",
             "2026-1-01T00:00:00Z",
             "2026-01-01T00:00Z",          // no seconds
             "+2026-01-01T00:00:00Z",
             "20260101T000000Z",           // ISO 8601 basic form is not RFC 3339
             "",
             "tomorrow",
         }) {
        CAPTURE(bad);
        CHECK_FALSE(parse_rfc3339(bad));
    }
}

TEST_CASE("parse_rfc3339: every proper prefix of a valid time gives nothing") {
    const std::string full = "2026-01-01T00:00:00.5+01:00";
    REQUIRE(parse_rfc3339(full));
    for (std::size_t n = 0; n < full.size(); ++n) {
        CAPTURE(n);
        CHECK_FALSE(parse_rfc3339(std::string_view(full).substr(0, n)));
    }
}

TEST_CASE("parse_rfc3339: nothing outside what wall_time holds") {
    if constexpr (std::is_same_v<wall_time::duration, std::chrono::nanoseconds>) {
        // A signed 64-bit count of nanoseconds ends at 2262-04-11T23:47:16.854775807Z.
        const auto last = parse_rfc3339("2262-04-11T23:47:16.854775Z");
        REQUIRE(last);
        CHECK(micros(*last) == 9223372036854775);
        CHECK_FALSE(parse_rfc3339("2262-04-11T23:47:16.854776Z"));
        CHECK_FALSE(parse_rfc3339("9999-12-31T23:59:59Z"));
        CHECK_FALSE(parse_rfc3339("0001-01-01T00:00:00Z"));
    } else {
        CHECK(parse_rfc3339("9999-12-31T23:59:59Z"));
        CHECK(parse_rfc3339("0001-01-01T00:00:00Z"));
    }
}
