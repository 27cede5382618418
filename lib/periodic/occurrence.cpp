// Occurrence ids and the decision taken when an occurrence falls due.
#include "tarry/periodic/occurrence.hpp"

#include <charconv>
#include <deque>

namespace tarry::periodic {
namespace {
using namespace std::chrono;
}

std::string format_nominal(wall_time nominal) {
    const auto ms = floor<milliseconds>(nominal.time_since_epoch()).count();
    const bool negative = ms < 0;
    const auto magnitude = negative ? -static_cast<unsigned long long>(ms) : static_cast<unsigned long long>(ms);
    std::string text = (negative ? "-" : "") + std::to_string(magnitude / 1000);
    auto fraction = magnitude % 1000;
    if (fraction != 0) {
        std::string digits = std::to_string(fraction);
        digits.insert(0, 3 - digits.size(), '0');
        while (digits.back() == '0') digits.pop_back();
        text += "." + digits;
    }
    return text;
}

std::optional<wall_time> parse_nominal(std::string_view text) {
    const bool negative = !text.empty() && text.front() == '-';
    if (negative) text.remove_prefix(1);
    const auto dot = text.find('.');
    const auto whole = text.substr(0, dot);
    if (whole.empty() || whole.size() > 15) return std::nullopt;
    for (const char c : whole)
        if (c < '0' || c > '9') return std::nullopt;
    long long seconds_part = 0;
    std::from_chars(whole.data(), whole.data() + whole.size(), seconds_part);
    long long millis = 0;
    if (dot != std::string_view::npos) {
        const auto fraction = text.substr(dot + 1);
        if (fraction.empty() || fraction.size() > 3 || fraction.back() == '0') return std::nullopt;
        for (const char c : fraction)
            if (c < '0' || c > '9') return std::nullopt;
        for (std::size_t i = 0; i < 3; ++i) millis = millis * 10 + (i < fraction.size() ? fraction[i] - '0' : 0);
    }
    const auto total = seconds_part * 1000 + millis;
    if (negative && total == 0) return std::nullopt;  // "-0" is not what format_nominal writes
    const milliseconds ms{negative ? -total : total};
    if (ms > floor<milliseconds>(wall_time::max().time_since_epoch()) ||
        ms < ceil<milliseconds>(wall_time::min().time_since_epoch()))
        return std::nullopt;
    return wall_time(duration_cast<wall_time::duration>(ms));
}

std::string occurrence_id(std::string_view schedule_id, wall_time nominal) {
    return std::string(schedule_id) + "@" + format_nominal(nominal);
}

release_decision on_release(const recurrence& schedule, wall_time nominal, occurrence_number number, wall_time now) {
    const auto& spec = schedule.spec();
    release_decision d;
    d.successor_number = number + 1;
    d.misfired = now - nominal > spec.misfire_threshold;
    if (!d.misfired) {
        d.run = true;
        d.successor = schedule.next_after(nominal);
    } else {
        switch (spec.misfire) {
        case misfire_policy::run_once:
            d.run = true;
            d.successor = schedule.next_after(now);
            break;
        case misfire_policy::skip:
            d.successor = schedule.next_after(now);
            break;
        case misfire_policy::catch_up: {
            // The latest catch_up_limit occurrences in (nominal, now].
            std::deque<wall_time> latest;
            std::size_t missed_after = 0;
            for (auto t = schedule.next_after(nominal); t && *t <= now; t = schedule.next_after(*t)) {
                ++missed_after;
                latest.push_back(*t);
                if (latest.size() > spec.catch_up_limit) latest.pop_front();
            }
            if (missed_after < spec.catch_up_limit) {
                d.run = true;
                d.successor = schedule.next_after(nominal);
            } else {
                d.successor = latest.front();
            }
            break;
        }
        }
    }
    if (spec.limit && d.successor_number > *spec.limit) d.successor.reset();
    return d;
}

}  // namespace tarry::periodic
