// parse_cron: cron text to the sets of cron_expression (its header gives
// the syntax).
#include "tarry/periodic/cron_expression.hpp"
#include "tarry/periodic/error.hpp"

#include "blank_words.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <vector>

namespace tarry::periodic {
namespace {

using detail::blank_separated;

struct field_rule {
    const char* name;
    unsigned min, max;
    const char* const* names;  // for min, min+1, ...; null: numbers only
    std::size_t name_count;
};

constexpr const char* month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr const char* weekday_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

constexpr field_rule second_rule{"second", 0, 59, nullptr, 0};
constexpr field_rule minute_rule{"minute", 0, 59, nullptr, 0};
constexpr field_rule hour_rule{"hour", 0, 23, nullptr, 0};
constexpr field_rule day_rule{"day-of-month", 1, 31, nullptr, 0};
constexpr field_rule month_rule{"month", 1, 12, month_names, 12};
// 7 is Sunday too; folded into 0 after parsing.
constexpr field_rule weekday_rule{"day-of-week", 0, 7, weekday_names, 7};

struct macro {
    const char* name;
    const char* fields;
};
constexpr macro macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
};

bool same_letters(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i])))
            return false;
    return true;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> parts;
    std::size_t begin = 0;
    while (true) {
        const auto at = text.find(sep, begin);
        parts.push_back(text.substr(begin, at == std::string_view::npos ? std::string_view::npos : at - begin));
        if (at == std::string_view::npos) return parts;
        begin = at + 1;
    }
}

class field_parser {
public:
    field_parser(const field_rule& rule, std::string& detail) : rule_(rule), detail_(detail) {}

    // The set of values of `text`, or false with detail_ set.
    bool parse(std::string_view text, std::vector<bool>& set) {
        set.assign(rule_.max + 1, false);
        if (text.empty()) return fail("empty field");
        for (const auto item : split(text, ',')) {
            if (!item_into(item, set)) return false;
        }
        return true;
    }

private:
    bool item_into(std::string_view item, std::vector<bool>& set) {
        if (item.empty()) return fail("an empty list item in '" + std::string(item) + "'");
        unsigned lo = rule_.min, hi = rule_.max, step = 1;
        std::string_view range = item;
        if (const auto slash = item.find('/'); slash != std::string_view::npos) {
            range = item.substr(0, slash);
            const auto step_text = item.substr(slash + 1);
            if (!number(step_text, step)) return fail("step '" + std::string(step_text) + "' is not a number");
            if (step == 0) return fail("a step of 0 in '" + std::string(item) + "'");
        }
        if (range == "*") {
            // the whole field
        } else if (const auto dash = range.find('-'); dash != std::string_view::npos) {
            if (!value(range.substr(0, dash), lo) || !value(range.substr(dash + 1), hi)) return false;
            if (lo > hi) return fail("range '" + std::string(range) + "' runs backwards");
        } else {
            if (!value(range, lo)) return false;
            // `a/n` runs from a to the field's end; a bare `a` is just a.
            hi = range.size() == item.size() ? lo : rule_.max;
        }
        for (unsigned v = lo; v <= hi; v += step) {
            set[v] = true;
            if (hi - v < step) break;
        }
        return true;
    }

    bool value(std::string_view text, unsigned& out) {
        if (rule_.names != nullptr) {
            for (std::size_t i = 0; i < rule_.name_count; ++i) {
                if (same_letters(text, rule_.names[i])) {
                    out = rule_.min + static_cast<unsigned>(i);
                    return true;
                }
            }
        }
        if (!number(text, out)) return fail("'" + std::string(text) + "' is not a number" +
                                            (rule_.names != nullptr ? " or a name" : ""));
        if (out < rule_.min || out > rule_.max)
            return fail("'" + std::string(text) + "' is not in " + std::to_string(rule_.min) + "-" +
                        std::to_string(rule_.max));
        return true;
    }

    static bool number(std::string_view text, unsigned& out) {
        if (text.empty() || text.size() > 9) return false;
        for (const char c : text)
            if (c < '0' || c > '9') return false;
        std::from_chars(text.data(), text.data() + text.size(), out);
        return true;
    }

    bool fail(const std::string& what) {
        detail_ = std::string(rule_.name) + ": " + what;
        return false;
    }

    const field_rule& rule_;
    std::string& detail_;
};

template <std::size_t N>
std::bitset<N> to_bits(const std::vector<bool>& set) {
    std::bitset<N> bits;
    for (std::size_t i = 0; i < set.size() && i < N; ++i) bits[i] = set[i];
    return bits;
}

// The longest a month can be: February counts 29 (leap years).
constexpr std::array<unsigned, 13> longest_month{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

}  // namespace

cron_parse_result parse_cron(std::string_view text) {
    cron_parse_result result;
    const auto refuse = [&](std::string detail) {
        result.error = errc::invalid_cron;
        result.detail = std::move(detail);
        return result;
    };
    auto words = blank_separated(text);
    std::string normalized;
    for (const auto w : words) normalized += (normalized.empty() ? "" : " ") + std::string(w);
    if (words.empty()) return refuse("empty expression");
    if (words.size() == 1 && words[0].front() == '@') {
        const macro* found = nullptr;
        for (const auto& m : macros)
            if (same_letters(words[0], m.name)) found = &m;
        if (found == nullptr)
            return refuse("unknown macro '" + std::string(words[0]) +
                          "' (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)");
        words = blank_separated(found->fields);
    }
    if (words.size() != 5 && words.size() != 6)
        return refuse(std::to_string(words.size()) +
                      " fields; a cron expression has 5 (m h dom mon dow) or 6 (s m h dom mon dow)");
    if (words.size() == 5) words.insert(words.begin(), "0");

    const field_rule* rules[] = {&second_rule, &minute_rule, &hour_rule, &day_rule, &month_rule, &weekday_rule};
    std::vector<bool> sets[6];
    for (std::size_t i = 0; i < 6; ++i) {
        field_parser parser(*rules[i], result.detail);
        if (!parser.parse(words[i], sets[i])) {
            result.error = errc::invalid_cron;
            return result;
        }
    }
    if (sets[5][7]) sets[5][0] = true;

    cron_expression e;
    e.text_ = normalized;
    e.seconds_ = to_bits<60>(sets[0]);
    e.minutes_ = to_bits<60>(sets[1]);
    e.hours_ = to_bits<24>(sets[2]);
    e.days_ = to_bits<32>(sets[3]);
    e.months_ = to_bits<13>(sets[4]);
    e.weekdays_ = to_bits<7>(sets[5]);
    e.dom_restricted_ = words[3].front() != '*';
    e.dow_restricted_ = words[5].front() != '*';
    e.follows_clock_ = words[2] == "*" || words[2].find('/') != std::string_view::npos;

    // Only a day-of-month that no chosen month has can make it never match
    // (with both restricted, the weekday alone can match).
    if (!(e.dom_restricted_ && e.dow_restricted_)) {
        bool possible = false;
        for (unsigned m = 1; m <= 12 && !possible; ++m)
            for (unsigned d = 1; d <= longest_month[m] && !possible; ++d) possible = e.months_[m] && e.days_[d];
        if (!possible)
            return refuse("day-of-month '" + std::string(words[3]) + "' never occurs in month '" +
                          std::string(words[4]) + "'");
    }
    result.expression = std::move(e);
    return result;
}

}  // namespace tarry::periodic
