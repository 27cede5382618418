// Test helpers for the periodic layer: instants and civil times from their
// fields, readable failure output for wall times and error codes, and
// shortcuts that build a schedule or fail the test.
#pragma once

#include "tarry/periodic/cron_expression.hpp"
#include "tarry/periodic/error.hpp"
#include "tarry/periodic/recurrence.hpp"
#include "tarry/time/time_points.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace periodic_test {

/// The UTC instant of a civil UTC time.
inline tarry::wall_time utc(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
    using namespace std::chrono;
    return tarry::wall_time(sys_days(year{y} / month{mo} / day{d}) + hours{h} + minutes{mi} + seconds{s});
}

/// A civil time (no zone), as cron_expression::matches takes it.
inline tarry::periodic::civil_seconds civil(int y, unsigned mo, unsigned d, int h = 0, int mi = 0, int s = 0) {
    using namespace std::chrono;
    return local_days(year{y} / month{mo} / day{d}) + hours{h} + minutes{mi} + seconds{s};
}

/// The instant `ms` milliseconds after the Unix epoch.
inline tarry::wall_time at_ms(std::int64_t ms) { return tarry::wall_time(std::chrono::milliseconds(ms)); }

/// "2026-03-29T01:00:00Z", with nanoseconds when there are any.
inline std::string show(tarry::wall_time t) {
    using namespace std::chrono;
    const auto day = floor<days>(t);
    const year_month_day ymd(day);
    const auto ns = duration_cast<nanoseconds>(t - day).count();
    const long long secs = ns / 1'000'000'000, frac = ns % 1'000'000'000;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02lld:%02lld:%02lld", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), secs / 3600, secs / 60 % 60,
                  secs % 60);
    std::string out = buf;
    if (frac != 0) {
        std::snprintf(buf, sizeof buf, ".%09lld", frac);
        out += buf;
    }
    return out + "Z";
}

/// "2026-03-29 02:30:00" (a civil time has no zone).
inline std::string show(tarry::periodic::civil_seconds t) {
    using namespace std::chrono;
    const auto day = floor<days>(t);
    const year_month_day ymd(day);
    const long long secs = (t - day).count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02u-%02u %02lld:%02lld:%02lld", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), secs / 3600, secs / 60 % 60,
                  secs % 60);
    return buf;
}

/// Parses `text`, failing the test when it is refused.
inline tarry::periodic::cron_expression cron(std::string_view text) {
    auto r = tarry::periodic::parse_cron(text);
    INFO("cron '", std::string(text), "': ", r.detail);
    REQUIRE(r.expression.has_value());
    return *r.expression;
}

/// Compiles `spec`, failing the test when it is refused.
inline tarry::periodic::recurrence compile(const tarry::periodic::schedule_spec& spec) {
    auto r = tarry::periodic::make_recurrence(spec);
    INFO("make_recurrence: ", r.detail);
    REQUIRE(r.schedule.has_value());
    return *r.schedule;
}

/// The recurrence of cron `text` in `zone`.
inline tarry::periodic::recurrence cron_in(std::string_view text, std::string zone = "UTC") {
    tarry::periodic::schedule_spec spec;
    spec.when = cron(text);
    spec.time_zone = std::move(zone);
    return compile(spec);
}

/// The recurrence of every `interval` (+ `offset`) milliseconds.
inline tarry::periodic::schedule_spec every_spec(std::int64_t interval_ms, std::int64_t offset_ms = 0) {
    tarry::periodic::schedule_spec spec;
    spec.when = tarry::periodic::every_interval{std::chrono::milliseconds(interval_ms),
                                                std::chrono::milliseconds(offset_ms)};
    return spec;
}

}  // namespace periodic_test

// Failed checks show instants, civil times and error codes readably.
template <>
struct doctest::StringMaker<tarry::wall_time> {
    static doctest::String convert(const tarry::wall_time& t) { return periodic_test::show(t).c_str(); }
};

template <>
struct doctest::StringMaker<std::optional<tarry::wall_time>> {
    static doctest::String convert(const std::optional<tarry::wall_time>& t) {
        return t ? periodic_test::show(*t).c_str() : "nothing";
    }
};

template <>
struct doctest::StringMaker<std::optional<tarry::periodic::civil_seconds>> {
    static doctest::String convert(const std::optional<tarry::periodic::civil_seconds>& t) {
        return t ? periodic_test::show(*t).c_str() : "nothing";
    }
};

template <>
struct doctest::StringMaker<std::error_code> {
    static doctest::String convert(const std::error_code& e) {
        if (!e) return "no error";
        return (e.category().name() + std::string(": ") + e.message()).c_str();
    }
};
