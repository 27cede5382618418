// RFC 3339 date-times to and from microseconds since the epoch, and the
// latest time a schedule may name.
#include "contract_detail.hpp"

#include <algorithm>
#include <cstdio>

namespace tarry::contract {

namespace {

using std::chrono::microseconds;

constexpr std::int64_t us_per_second = 1'000'000;
constexpr std::int64_t us_per_day = 86'400 * us_per_second;

// Reads exactly n digits at text[pos...] into out.
bool digits(std::string_view text, std::size_t pos, std::size_t n, int& out) noexcept {
    if (pos > text.size() || text.size() - pos < n) return false;
    out = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const char c = text[pos + i];
        if (c < '0' || c > '9') return false;
        out = out * 10 + (c - '0');
    }
    return true;
}

bool is(std::string_view text, std::size_t pos, char a, char b = 0, char c = 0) noexcept {
    return pos < text.size() && (text[pos] == a || (b && text[pos] == b) || (c && text[pos] == c));
}

}  // namespace

std::int64_t detail::latest_micros() noexcept {
    constexpr std::int64_t year_9999_end = 253'402'300'799 * us_per_second;  // 9999-12-31T23:59:59Z
    const std::int64_t clock_end =
        std::chrono::floor<microseconds>(wall_time::max().time_since_epoch()).count();
    return std::min(year_9999_end, clock_end);
}

std::optional<std::int64_t> detail::parse_rfc3339_micros(std::string_view t) noexcept {
    // YYYY-MM-DD(T|t| )HH:MM:SS[.frac](Z|z|±HH:MM)
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!digits(t, 0, 4, year) || !is(t, 4, '-') || !digits(t, 5, 2, month) || !is(t, 7, '-') ||
        !digits(t, 8, 2, day) || !is(t, 10, 'T', 't', ' ') || !digits(t, 11, 2, hour) ||
        !is(t, 13, ':') || !digits(t, 14, 2, minute) || !is(t, 16, ':') || !digits(t, 17, 2, second))
        return std::nullopt;
    const std::chrono::year_month_day ymd{std::chrono::year(year),
                                          std::chrono::month(static_cast<unsigned>(month)),
                                          std::chrono::day(static_cast<unsigned>(day))};
    // Second 60 (a leap second) is allowed and reads as the next minute's :00.
    if (!ymd.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
    std::size_t pos = 19;
    std::int64_t fraction = 0;  // µs
    if (is(t, pos, '.')) {
        const std::size_t start = ++pos;
        bool below = false;  // a non-zero digit below the microsecond: round up
        for (; pos < t.size() && t[pos] >= '0' && t[pos] <= '9'; ++pos) {
            if (pos - start < 6) fraction = fraction * 10 + (t[pos] - '0');
            else below |= t[pos] != '0';
        }
        if (pos == start) return std::nullopt;
        for (std::size_t n = pos - start; n < 6; ++n) fraction *= 10;
        fraction += below ? 1 : 0;
    }
    int offset = 0;  // minutes east of UTC
    if (is(t, pos, 'Z', 'z')) {
        ++pos;
    } else if (is(t, pos, '+', '-')) {
        int oh = 0, om = 0;
        if (!digits(t, pos + 1, 2, oh) || !is(t, pos + 3, ':') || !digits(t, pos + 4, 2, om) ||
            oh > 23 || om > 59)
            return std::nullopt;
        offset = (oh * 60 + om) * (t[pos] == '-' ? -1 : 1);
        pos += 6;
    } else {
        return std::nullopt;
    }
    if (pos != t.size()) return std::nullopt;
    const std::int64_t days = std::chrono::sys_days(ymd).time_since_epoch().count();
    const std::int64_t seconds = (hour * 60 + minute - offset) * 60 + second;
    return days * us_per_day + seconds * us_per_second + fraction;
}

std::optional<wall_time> parse_rfc3339(std::string_view text) {
    const auto us = detail::parse_rfc3339_micros(text);
    if (!us) return std::nullopt;
    const auto lo = std::chrono::ceil<microseconds>(wall_time::min().time_since_epoch()).count();
    const auto hi = std::chrono::floor<microseconds>(wall_time::max().time_since_epoch()).count();
    if (*us < lo || *us > hi) return std::nullopt;
    return wall_time(std::chrono::ceil<wall_time::duration>(microseconds(*us)));
}

std::string detail::format_rfc3339(std::int64_t us) {
    const std::int64_t days = us / us_per_day - (us % us_per_day < 0 ? 1 : 0);
    const std::int64_t in_day = us - days * us_per_day;
    const std::chrono::year_month_day ymd{std::chrono::sys_days(std::chrono::days(days))};
    const std::int64_t s = in_day / us_per_second;
    char buf[64];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d", static_cast<int>(ymd.year()),
                          static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                          static_cast<int>(s / 3600), static_cast<int>(s / 60 % 60), static_cast<int>(s % 60));
    std::string out(buf, static_cast<std::size_t>(std::clamp(n, 0, static_cast<int>(sizeof buf) - 1)));
    if (const std::int64_t frac = in_day % us_per_second; frac != 0) {
        std::snprintf(buf, sizeof buf, ".%06d", static_cast<int>(frac));
        std::string f(buf);
        while (f.back() == '0') f.pop_back();
        out += f;
    }
    return out + "Z";
}

}  // namespace tarry::contract
