// cron_expression: matching civil times, and the search for the next one.
#include "tarry/periodic/cron_expression.hpp"

namespace tarry::periodic {
namespace {

using namespace std::chrono;

// The lowest set bit at or above `from`; N when none.
template <std::size_t N>
std::size_t next_bit(const std::bitset<N>& bits, std::size_t from) noexcept {
    for (std::size_t i = from; i < N; ++i)
        if (bits[i]) return i;
    return N;
}

}  // namespace

bool cron_expression::day_matches(year_month_day d) const noexcept {
    const bool dom = days_[static_cast<unsigned>(d.day())];
    const bool dow = weekdays_[weekday(sys_days(d)).c_encoding()];
    if (dom_restricted_ && dow_restricted_) return dom || dow;
    return dom && dow;
}

bool cron_expression::matches(civil_seconds t) const noexcept {
    const auto day = floor<days>(t);
    const year_month_day ymd{day};
    const hh_mm_ss<seconds> tod{t - day};
    return months_[static_cast<unsigned>(ymd.month())] && day_matches(ymd) &&
           hours_[static_cast<std::size_t>(tod.hours().count())] &&
           minutes_[static_cast<std::size_t>(tod.minutes().count())] &&
           seconds_[static_cast<std::size_t>(tod.seconds().count())];
}

std::optional<civil_seconds> cron_expression::first_match(civil_seconds from, civil_seconds before) const noexcept {
    auto day = floor<days>(from);
    auto tod = from - day;  // where the search starts within `day`
    while (day < before) {
        const year_month_day ymd{sys_days(day.time_since_epoch())};
        if (!months_[static_cast<unsigned>(ymd.month())]) {
            // the first day of the next month
            const auto next = ymd.year() / ymd.month() / 1d + months{1};
            day = local_days(sys_days(next).time_since_epoch());
            tod = seconds{0};
            continue;
        }
        if (day_matches(ymd)) {
            const hh_mm_ss<seconds> start{tod};
            const auto h0 = static_cast<std::size_t>(start.hours().count());
            for (auto h = next_bit(hours_, h0); h < 24; h = next_bit(hours_, h + 1)) {
                const std::size_t m0 = h == h0 ? static_cast<std::size_t>(start.minutes().count()) : 0;
                for (auto m = next_bit(minutes_, m0); m < 60; m = next_bit(minutes_, m + 1)) {
                    const std::size_t s0 = h == h0 && m == m0 ? static_cast<std::size_t>(start.seconds().count()) : 0;
                    const auto s = next_bit(seconds_, s0);
                    if (s == 60) continue;
                    const auto t = day + hours{h} + minutes{m} + seconds{s};
                    if (t < before) return t;
                    return std::nullopt;
                }
            }
        }
        day += days{1};
        tod = seconds{0};
    }
    return std::nullopt;
}

}  // namespace tarry::periodic
