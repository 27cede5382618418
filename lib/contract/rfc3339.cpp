// RFC 3339 date-times → wall_time (see tarry/contract/schedule_headers.hpp).
#include "tarry/contract/schedule_headers.hpp"

#include <cctype>

namespace tarry::contract {

namespace {

// Reads exactly n digits at text[pos...] into out.
bool digits(std::string_view text, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > text.size()) return false;
    out = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const char c = text[pos + i];
        if (c < '0' || c > '9') return false;
        out = out * 10 + (c - '0');
    }
    return true;
}

}  // namespace

std::optional<wall_time> parse_rfc3339(std::string_view t) {
    // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (t.size() < 20 || !digits(t, 0, 4, year) || t[4] != '-' || !digits(t, 5, 2, month) ||
        t[7] != '-' || !digits(t, 8, 2, day) || (t[10] != 'T' && t[10] != 't' && t[10] != ' ') ||
        !digits(t, 11, 2, hour) || t[13] != ':' || !digits(t, 14, 2, minute) || t[16] != ':' ||
        !digits(t, 17, 2, second))
        return std::nullopt;
    const std::chrono::year_month_day ymd{std::chrono::year(year),
                                          std::chrono::month(static_cast<unsigned>(month)),
                                          std::chrono::day(static_cast<unsigned>(day))};
    if (!ymd.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
    std::size_t pos = 19;
    std::int64_t micros = 0;
    bool round_up = false;
    if (pos < t.size() && t[pos] == '.') {
        ++pos;
        const std::size_t start = pos;
        while (pos < t.size() && t[pos] >= '0' && t[pos] <= '9') {
            const std::size_t place = pos - start;
            if (place < 6) micros = micros * 10 + (t[pos] - '0');
            else if (t[pos] != '0') round_up = true;  // below a microsecond: never early
            ++pos;
        }
        const std::size_t n = pos - start;
        if (n == 0) return std::nullopt;
        for (std::size_t i = n; i < 6; ++i) micros *= 10;
    }
    if (pos >= t.size()) return std::nullopt;
    int offset_minutes = 0;
    if (t[pos] == 'Z' || t[pos] == 'z') {
        ++pos;
    } else if (t[pos] == '+' || t[pos] == '-') {
        int oh = 0, om = 0;
        if (!digits(t, pos + 1, 2, oh) || pos + 3 >= t.size() || t[pos + 3] != ':' ||
            !digits(t, pos + 4, 2, om) || oh > 23 || om > 59)
            return std::nullopt;
        offset_minutes = (oh * 60 + om) * (t[pos] == '+' ? 1 : -1);
        pos += 6;
    } else {
        return std::nullopt;
    }
    if (pos != t.size()) return std::nullopt;
    // A leap second (:60) is read as the first instant of the next minute.
    const auto days = std::chrono::sys_days(ymd);
    const auto local = days + std::chrono::hours(hour) + std::chrono::minutes(minute) +
                       std::chrono::seconds(second) + std::chrono::microseconds(micros + (round_up ? 1 : 0));
    const auto utc = local - std::chrono::minutes(offset_minutes);
    return std::chrono::time_point_cast<wall_time::duration>(utc);
}

}  // namespace tarry::contract
