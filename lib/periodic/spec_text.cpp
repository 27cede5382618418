// schedule_spec as one line of text (recurrence.hpp gives the grammar):
// what the control stream carries and `tarry schedule list` prints.
#include "tarry/periodic/error.hpp"
#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"

#include "blank_words.hpp"

#include <charconv>
#include <set>
#include <vector>

namespace tarry::periodic {
namespace {

using namespace std::chrono;

constexpr std::string_view keywords[] = {"tz", "start", "end", "limit", "run-now", "misfire", "misfire-threshold"};

bool is_keyword(std::string_view word) {
    for (const auto k : keywords)
        if (word == k) return true;
    return false;
}

template <class T>
bool read_number(std::string_view text, T& out) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc{} && end == text.data() + text.size();
}

// "1500ms" -> 1500 ms.
bool read_millis(std::string_view text, milliseconds& out) {
    if (text.size() < 3 || !text.ends_with("ms")) return false;
    long long n = 0;
    if (!read_number(text.substr(0, text.size() - 2), n)) return false;
    out = milliseconds{n};
    return true;
}

}  // namespace

std::string to_string(const schedule_spec& spec) {
    std::string text;
    if (const auto* e = std::get_if<every_interval>(&spec.when)) {
        text = "every " + std::to_string(e->interval.count()) + "ms";
        if (e->offset.count() != 0) text += "+" + std::to_string(e->offset.count()) + "ms";
    } else {
        text = "cron " + std::get<cron_expression>(spec.when).text();
        if (spec.time_zone != "UTC") text += " tz " + spec.time_zone;
    }
    if (spec.start) text += " start " + format_nominal(*spec.start);
    if (spec.end) text += " end " + format_nominal(*spec.end);
    if (spec.limit) text += " limit " + std::to_string(*spec.limit);
    if (spec.run_now) text += " run-now";
    if (spec.misfire == misfire_policy::skip) text += " misfire skip";
    if (spec.misfire == misfire_policy::catch_up) text += " misfire catch-up " + std::to_string(spec.catch_up_limit);
    if (spec.misfire_threshold != schedule_spec{}.misfire_threshold)
        text += " misfire-threshold " + std::to_string(spec.misfire_threshold.count()) + "ms";
    return text;
}

spec_parse_result parse_spec(std::string_view text) {
    spec_parse_result result;
    const auto refuse = [&](errc code, std::string detail) {
        result.error = code;
        result.detail = std::move(detail);
        return result;
    };
    const auto words = detail::blank_separated(text);
    std::size_t i = 1;
    schedule_spec spec;
    if (words.empty()) return refuse(errc::invalid_schedule, "an empty schedule (every Nms, or cron EXPR)");
    if (words[0] == "every") {
        if (words.size() < 2) return refuse(errc::invalid_schedule, "every: no interval (e.g. every 1000ms)");
        every_interval e;
        const auto plus = words[1].find('+');
        if (!read_millis(words[1].substr(0, plus), e.interval) ||
            (plus != std::string_view::npos && !read_millis(words[1].substr(plus + 1), e.offset)))
            return refuse(errc::invalid_schedule,
                          "every: '" + std::string(words[1]) + "' is not Nms or Nms+Mms (milliseconds)");
        spec.when = e;
        i = 2;
    } else if (words[0] == "cron") {
        std::string expression;
        while (i < words.size() && !is_keyword(words[i]))
            expression += (expression.empty() ? "" : " ") + std::string(words[i++]);
        auto cron = parse_cron(expression);
        if (!cron.expression) return refuse(errc::invalid_cron, "cron: " + cron.detail);
        spec.when = std::move(*cron.expression);
    } else {
        return refuse(errc::invalid_schedule, "'" + std::string(words[0]) + "': a schedule starts with every or cron");
    }

    std::set<std::string_view> seen;
    while (i < words.size()) {
        const auto key = words[i++];
        if (!is_keyword(key)) return refuse(errc::invalid_schedule, "unknown part '" + std::string(key) + "'");
        if (!seen.insert(key).second) return refuse(errc::invalid_schedule, "'" + std::string(key) + "' given twice");
        if (key == "run-now") {
            spec.run_now = true;
            continue;
        }
        if (i >= words.size()) return refuse(errc::invalid_schedule, "'" + std::string(key) + "' without a value");
        const auto value = words[i++];
        const auto bad = [&](const char* what) {
            return refuse(errc::invalid_schedule, std::string(key) + ": '" + std::string(value) + "' is not " + what);
        };
        if (key == "tz") {
            spec.time_zone = std::string(value);
        } else if (key == "start" || key == "end") {
            const auto at = parse_nominal(value);
            if (!at) return bad("epoch seconds (at most 3 fraction digits)");
            (key == "start" ? spec.start : spec.end) = *at;
        } else if (key == "limit") {
            std::uint64_t n = 0;
            if (!read_number(value, n)) return bad("a count");
            spec.limit = n;
        } else if (key == "misfire") {
            if (value == "run-once") {
                spec.misfire = misfire_policy::run_once;
            } else if (value == "skip") {
                spec.misfire = misfire_policy::skip;
            } else if (value == "catch-up") {
                spec.misfire = misfire_policy::catch_up;
                if (i >= words.size() || !read_number(words[i], spec.catch_up_limit))
                    return refuse(errc::invalid_schedule, "misfire catch-up: no count of occurrences after it");
                ++i;
            } else {
                return bad("run-once, skip or catch-up N");
            }
        } else if (key == "misfire-threshold") {
            if (!read_millis(value, spec.misfire_threshold)) return bad("Nms (milliseconds)");
        }
    }
    // The values, as make_recurrence checks them (the zone too).
    if (auto compiled = make_recurrence(spec); !compiled.schedule)
        return refuse(static_cast<errc>(compiled.error.value()), std::move(compiled.detail));
    result.spec = std::move(spec);
    return result;
}

}  // namespace tarry::periodic
