// A property test: random cron expressions, their next_after chains over
// 2026 compared with a brute-force reference that walks the year one
// minute (5 fields) or one second (6 fields) at a time in UTC,
// Europe/Berlin or America/New_York and decides each instant by the rules:
//   - a civil time matches when seconds, minutes, hours and month match and
//     the day does: day of month OR weekday when both fields are
//     restricted (neither starts with '*'), else day of month AND weekday;
//   - a schedule whose hour field is '*' or has a step follows the clock: an
//     instant is an occurrence when its civil time matches (a repeated hour
//     runs twice, a missing one never);
//   - any other schedule: an instant is an occurrence when its civil time
//     matches and has not been seen at an earlier instant (first instance
//     of a repeated hour), or when it is the first instant after a gap and
//     some civil time in the gap matches.
// The generator builds each expression's text and its sets of values
// together, so the reference needs no parser of its own. The seed is fixed
// (and printed): a failure reproduces.
#include "periodic_test.hpp"

#include "tarry/periodic/cron_expression.hpp"
#include "tarry/periodic/recurrence.hpp"

#include <cctz/civil_time.h>
#include <cctz/time_zone.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <bitset>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace periodic = tarry::periodic;
using tarry::wall_time;

namespace {

constexpr std::uint64_t seed = 20260329;
constexpr int five_field_count = 240;
constexpr int six_field_count = 6;

// 2026-01-01T00:00:00Z and 2027-01-01T00:00:00Z in epoch seconds
// (`date -u -d 2026-01-01 +%s`, `date -u -d 2027-01-01 +%s`).
constexpr std::int64_t year_start = 1767225600;
constexpr std::int64_t year_end = 1798761600;
constexpr std::int64_t minutes_in_year = (year_end - year_start) / 60;

// splitmix64: the same numbers on every platform.
struct random_source {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
    int between(int lo, int hi) { return lo + below(hi - lo + 1); }
    bool chance(int percent) { return below(100) < percent; }
};

// --- the generator ---

const char* const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
const char* const weekday_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

enum field_kind { f_second, f_minute, f_hour, f_dom, f_month, f_dow };

struct field_def {
    field_kind kind;
    int lo, hi;
};

const field_def fields_of[] = {{f_second, 0, 59}, {f_minute, 0, 59}, {f_hour, 0, 23},
                               {f_dom, 1, 31},    {f_month, 1, 12},  {f_dow, 0, 7}};

struct expression {
    std::string text;
    bool six = false;
    std::bitset<60> seconds, minutes;
    std::bitset<24> hours;
    std::bitset<32> days;
    std::bitset<13> months;
    std::bitset<7> weekdays;
    bool dom_restricted = false, dow_restricted = false, follows_clock = false;
};

std::string random_case(random_source& g, const char* name) {
    std::string out = name;
    const int style = g.below(3);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const bool lower = style == 0 || (style == 2 && g.chance(50)) || (style == 1 && i > 0);
        if (lower) out[i] = static_cast<char>(out[i] - 'A' + 'a');
    }
    return out;
}

// A value of the field, biased towards the values the daylight-saving
// changes and short months exercise.
int pick(random_source& g, const field_def& f) {
    switch (f.kind) {
    case f_hour:
        if (g.chance(60)) return g.between(1, 3);
        break;
    case f_dom:
        if (g.chance(40)) {
            const int special[] = {1, 8, 25, 28, 29, 30, 31};
            return special[g.below(7)];
        }
        break;
    case f_month:
        if (g.chance(40)) {
            const int special[] = {2, 3, 4, 10, 11};
            return special[g.below(5)];
        }
        break;
    case f_dow:  // the changes are on Sundays
        if (g.chance(40)) return g.chance(50) ? 0 : 7;
        break;
    default:
        break;
    }
    return g.between(f.lo, f.hi);
}

// The text of value `v`, as a name when the field has names and `named`.
std::string value_text(random_source& g, const field_def& f, int v, bool named) {
    if (named && f.kind == f_month) return random_case(g, month_names[v - 1]);
    if (named && f.kind == f_dow && v <= 6) return random_case(g, weekday_names[v]);
    return std::to_string(v);
}

// One field: its text, and `values` set for what it matches. A sparse
// field (a six-field expression's seconds and minutes) has few values; a
// narrow one only values and short ranges.
std::string make_field(random_source& g, const field_def& f, int star_percent, bool sparse,
                       std::vector<bool>& values, bool narrow = false) {
    values.assign(static_cast<std::size_t>(f.hi + 1), false);
    if (!sparse && g.chance(star_percent)) {
        for (int v = f.lo; v <= f.hi; ++v) values[static_cast<std::size_t>(v)] = true;
        return "*";
    }
    const bool has_names = f.kind == f_month || f.kind == f_dow;
    const int items = g.chance(60) ? 1 : g.chance(75) ? 2 : 3;
    std::string text;
    for (int item = 0; item < items; ++item) {
        if (item) text += ',';
        // 0 value, 1 range, 2 */n, 3 a-b/n, 4 a/n (not for weekdays: whether
        // a weekday's a/n runs to 6 or 7 is not written down).
        const int kind = narrow ? g.below(2) : f.kind == f_dow ? g.below(4) : g.below(5);
        const bool named = has_names && g.chance(35);
        if (kind == 0) {
            const int v = pick(g, f);
            values[static_cast<std::size_t>(v)] = true;
            text += value_text(g, f, v, named);
        } else if (kind == 1 || kind == 3) {
            int a = pick(g, f);
            int b = sparse || narrow ? std::min(f.hi, a + g.below(4)) : g.between(a, f.hi);
            const bool use_names = named && (f.kind == f_month || b <= 6);
            int step = 1;
            if (kind == 3) step = sparse ? g.between(10, 30) : g.between(1, std::max(1, b - a));
            for (int v = a; v <= b; v += step) values[static_cast<std::size_t>(v)] = true;
            text += value_text(g, f, a, use_names) + "-" + value_text(g, f, b, use_names);
            if (kind == 3) text += "/" + std::to_string(step);
        } else if (kind == 2) {
            const int max_step = f.kind == f_dow ? 6 : f.hi - f.lo;
            const int step = sparse ? g.between(10, 30) : g.between(1, max_step);
            const int top = f.kind == f_dow ? 6 : f.hi;
            for (int v = f.lo; v <= top; v += step) values[static_cast<std::size_t>(v)] = true;
            text += "*/" + std::to_string(step);
        } else {
            const int a = pick(g, f);
            const int step = sparse ? g.between(10, 30) : g.between(1, std::max(1, f.hi - a));
            for (int v = a; v <= f.hi; v += step) values[static_cast<std::size_t>(v)] = true;
            text += value_text(g, f, a, false) + "/" + std::to_string(step);
        }
    }
    return text;
}

template <std::size_t N>
void set_bits(std::bitset<N>& bits, const std::vector<bool>& values) {
    for (std::size_t v = 0; v < values.size(); ++v)
        if (values[v]) bits.set(v == 7 && N == 7 ? 0 : v);  // weekday 7 is Sunday
}

expression make_macro(random_source& g) {
    struct macro {
        const char* name;
        bool monthly_day, yearly_month, weekly, hourly;
    };
    const macro macros[] = {{"@yearly", true, true, false, false},   {"@annually", true, true, false, false},
                            {"@monthly", true, false, false, false}, {"@weekly", false, false, true, false},
                            {"@daily", false, false, false, false},  {"@midnight", false, false, false, false},
                            {"@hourly", false, false, false, true}};
    const macro& m = macros[g.below(7)];
    expression e;
    e.text = m.name;
    e.seconds.set(0);
    e.minutes.set(0);
    if (m.hourly) e.hours.set();
    else e.hours.set(0);
    if (m.monthly_day) e.days.set(1);
    else e.days.set();
    e.days.reset(0);
    if (m.yearly_month) e.months.set(1);
    else e.months.set();
    e.months.reset(0);
    if (m.weekly) e.weekdays.set(0);
    else e.weekdays.set();
    e.dom_restricted = m.monthly_day;
    e.dow_restricted = m.weekly;
    e.follows_clock = m.hourly;
    return e;
}

// `focused`: any day (mostly), hours as values and short ranges: such
// expressions hit the daylight-saving changes often.
expression make_expression(random_source& g, bool six, bool focused) {
    if (!six && g.chance(6)) return make_macro(g);
    expression e;
    e.six = six;
    std::vector<bool> values;
    std::string texts[6];
    texts[0] = six ? make_field(g, fields_of[0], 0, true, values) : "0";
    if (six) set_bits(e.seconds, values);
    else e.seconds.set(0);
    texts[1] = make_field(g, fields_of[1], 10, six, values);
    set_bits(e.minutes, values);
    const int day_star = focused ? 85 : 55;
    texts[2] = make_field(g, fields_of[2], focused ? 0 : 30, false, values, focused);
    set_bits(e.hours, values);
    texts[3] = make_field(g, fields_of[3], day_star, false, values);
    set_bits(e.days, values);
    texts[4] = make_field(g, fields_of[4], day_star, false, values);
    set_bits(e.months, values);
    texts[5] = make_field(g, fields_of[5], day_star, false, values);
    set_bits(e.weekdays, values);
    for (int i = six ? 0 : 1; i < 6; ++i) {
        if (!e.text.empty()) e.text += ' ';
        e.text += texts[i];
    }
    e.dom_restricted = texts[3][0] != '*';
    e.dow_restricted = texts[5][0] != '*';
    e.follows_clock = texts[2] == "*" || texts[2].find('/') != std::string::npos;
    return e;
}

// Whether some day of some year matches: always when both day fields are
// restricted (a weekday comes every week); else some day of month of some
// month in the set must exist (February has a 29th in leap years), and
// every (month, day) pair falls on every weekday in some year.
bool matches_some_day(const expression& e) {
    if (e.dom_restricted && e.dow_restricted) return true;
    const int length[] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    for (int m = 1; m <= 12; ++m)
        for (int d = 1; d <= length[m]; ++d)
            if (e.months[static_cast<std::size_t>(m)] && e.days[static_cast<std::size_t>(d)]) return true;
    return false;
}

// --- the reference ---

struct civil_fields {
    std::uint8_t month, day, weekday, hour, minute;
};

// A civil time given as seconds since 1970-01-01 00:00:00 (no zone),
// split into the fields cron reads.
civil_fields split(std::int64_t local) {
    using namespace std::chrono;
    const std::int64_t day_number = (local >= 0 ? local : local - 86399) / 86400;
    const std::int64_t second_of_day = local - day_number * 86400;
    const sys_days day{days{day_number}};
    const year_month_day ymd(day);
    return {static_cast<std::uint8_t>(static_cast<unsigned>(ymd.month())),
            static_cast<std::uint8_t>(static_cast<unsigned>(ymd.day())),
            static_cast<std::uint8_t>(weekday(day).c_encoding()), static_cast<std::uint8_t>(second_of_day / 3600),
            static_cast<std::uint8_t>(second_of_day / 60 % 60)};
}

bool matches_minute(const expression& e, const civil_fields& c) {
    if (!e.minutes[c.minute] || !e.hours[c.hour] || !e.months[c.month]) return false;
    const bool dom = e.days[c.day], dow = e.weekdays[c.weekday];
    return e.dom_restricted && e.dow_restricted ? dom || dow : dom && dow;
}

// One zone over 2026, minute by minute: each minute's civil time (and the
// one before the year, index 0), whether a gap ends there, whether its
// civil time was already seen at an earlier instant.
struct zone_year {
    std::string name;
    std::vector<std::int64_t> local;  // local[i + 1]: minute i's civil time
    std::vector<civil_fields> fields;
    std::vector<bool> repeated, gap_before;
    std::vector<std::int64_t> transitions;  // epoch seconds
};

zone_year load_year(const std::string& name) {
    cctz::time_zone tz;
    REQUIRE(cctz::load_time_zone(name, &tz));
    zone_year z;
    z.name = name;
    const cctz::civil_second epoch(1970, 1, 1, 0, 0, 0);
    z.local.reserve(static_cast<std::size_t>(minutes_in_year + 1));
    for (std::int64_t i = -1; i < minutes_in_year; ++i) {
        const std::chrono::sys_seconds t{std::chrono::seconds(year_start + 60 * i)};
        z.local.push_back(cctz::convert(t, tz) - epoch);
    }
    std::int64_t latest = z.local[0];
    for (std::int64_t i = 0; i < minutes_in_year; ++i) {
        const std::int64_t here = z.local[static_cast<std::size_t>(i + 1)];
        const std::int64_t before = z.local[static_cast<std::size_t>(i)];
        z.fields.push_back(split(here));
        z.repeated.push_back(here <= latest);
        z.gap_before.push_back(here - before > 60);
        if (here - before != 60) z.transitions.push_back(year_start + 60 * i);
        latest = std::max(latest, here);
    }
    return z;
}

// How often the daylight-saving rules decided something.
struct rule_counts {
    int gap_runs = 0;          // a fixed-hour run at a transition for a time in the gap
    int second_instances = 0;  // a follow-the-clock run in the second instance of a repeated hour
    int suppressed = 0;        // a fixed-hour match in the second instance, not run
};

// The occurrences in 2026, in epoch seconds.
std::vector<std::int64_t> reference(const expression& e, const zone_year& z, rule_counts& counts_of_rules) {
    std::vector<std::int64_t> out;
    for (std::int64_t i = 0; i < minutes_in_year; ++i) {
        const auto at = static_cast<std::size_t>(i);
        const bool minute_matches = matches_minute(e, z.fields[at]);
        const bool counts = e.follows_clock || !z.repeated[at];
        const std::int64_t gap_from = z.local[at] + 60, gap_to = z.local[at + 1];
        const int steps = e.six ? 60 : 1;
        for (int s = 0; s < steps; ++s) {
            const bool second_matches = minute_matches && e.seconds[static_cast<std::size_t>(s)];
            bool occurs = counts && second_matches;
            if (second_matches && z.repeated[at])
                ++(occurs ? counts_of_rules.second_instances : counts_of_rules.suppressed);
            if (s == 0 && !occurs && !e.follows_clock && z.gap_before[at]) {
                for (std::int64_t c = gap_from; c < gap_to && !occurs; c += e.six ? 1 : 60)
                    occurs = e.seconds[static_cast<std::size_t>(c % 60)] && matches_minute(e, split(c - c % 60));
                if (occurs) ++counts_of_rules.gap_runs;
            }
            if (occurs) out.push_back(year_start + 60 * i + s);
        }
    }
    return out;
}

wall_time instant(std::int64_t s) { return wall_time(std::chrono::seconds(s)); }

std::string show_or_nothing(const std::vector<std::int64_t>& v, std::size_t i) {
    return i < v.size() ? periodic_test::show(instant(v[i])) : "none before the end";
}

// Compares next_after's chain with the reference in [from, to); reports
// the first difference. Returns whether they agree.
bool same_chain(const periodic::recurrence& r, const expression& e, const zone_year& z,
                const std::vector<std::int64_t>& all, std::int64_t from, std::int64_t to) {
    std::vector<std::int64_t> expected;
    for (auto t : all)
        if (t >= from && t < to) expected.push_back(t);
    std::vector<std::int64_t> got;
    wall_time after = instant(from - 1);
    while (got.size() <= expected.size()) {
        const auto next = r.next_after(after);
        if (!next || *next >= instant(to)) break;
        got.push_back(std::chrono::duration_cast<std::chrono::seconds>(next->time_since_epoch()).count());
        if (*next <= after) break;  // not strictly after: stop, the difference is reported below
        after = *next;
    }
    std::size_t i = 0;
    while (i < expected.size() && i < got.size() && expected[i] == got[i]) ++i;
    if (i == expected.size() && i == got.size()) return true;
    FAIL_CHECK("'" << e.text << "' in " << z.name << ", chain from " << periodic_test::show(instant(from))
                   << " to " << periodic_test::show(instant(to)) << ", occurrence " << i + 1 << ": expected "
                   << show_or_nothing(expected, i) << ", got " << show_or_nothing(got, i)
                   << (i > 0 ? ", after " + periodic_test::show(instant(expected[i - 1])) : std::string()));
    return false;
}

}  // namespace

TEST_CASE("random cron expressions: next_after agrees with a minute-by-minute (second-by-second) reference") {
    MESSAGE("seed ", seed);
    const std::vector<zone_year> zones = {load_year("UTC"), load_year("Europe/Berlin"),
                                          load_year("America/New_York")};
    // The reference sees the changes zdump reports (two a year, none in UTC).
    const auto epoch_seconds = [](wall_time t) {
        return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
    };
    using periodic_test::utc;
    CHECK(zones[0].transitions.empty());
    CHECK(zones[1].transitions ==
          std::vector<std::int64_t>{epoch_seconds(utc(2026, 3, 29, 1)), epoch_seconds(utc(2026, 10, 25, 1))});
    CHECK(zones[2].transitions ==
          std::vector<std::int64_t>{epoch_seconds(utc(2026, 3, 8, 7)), epoch_seconds(utc(2026, 11, 1, 6))});

    random_source g{seed};
    int compared = 0, refused = 0, disagreements = 0;
    rule_counts rules;
    for (int n = 0; n < five_field_count + six_field_count; ++n) {
        const bool six = n >= five_field_count;
        const expression e = make_expression(g, six, n % 4 == 1);
        const zone_year& z = zones[static_cast<std::size_t>(n % 3)];
        CAPTURE(e.text);
        const auto parsed = periodic::parse_cron(e.text);
        if (!matches_some_day(e)) {
            ++refused;
            if (parsed.expression) {
                ++disagreements;
                FAIL_CHECK("'" << e.text << "' matches no day but was accepted");
            }
            continue;
        }
        if (!parsed.expression) {
            ++disagreements;
            FAIL_CHECK("'" << e.text << "' was refused: " << parsed.detail);
            continue;
        }
        const auto& cron = *parsed.expression;
        if (cron.text() != e.text || cron.follows_clock() != e.follows_clock) {
            ++disagreements;
            FAIL_CHECK("'" << e.text << "': text() '" << cron.text() << "', follows_clock() " << cron.follows_clock()
                           << ", expected " << e.follows_clock);
        }

        // matches() on a sample of civil times.
        for (int k = 0; k < 300; ++k) {
            const auto i = static_cast<std::size_t>(g.below(static_cast<int>(minutes_in_year)));
            const int s = e.six ? g.below(60) : 0;
            const std::int64_t c = zones[0].local[i + 1] + s;
            const bool expected = matches_minute(e, zones[0].fields[i]) && e.seconds[static_cast<std::size_t>(s)];
            const periodic::civil_seconds civil{std::chrono::seconds(c)};
            if (cron.matches(civil) != expected) {
                ++disagreements;
                FAIL_CHECK("'" << e.text << "' matches(" << periodic_test::show(civil) << ") is " << !expected);
                break;
            }
        }

        periodic::schedule_spec spec;
        spec.when = cron;
        spec.time_zone = z.name;
        const auto made = periodic::make_recurrence(spec);
        if (!made.schedule) {
            ++disagreements;
            FAIL_CHECK("'" << e.text << "' in " << z.name << ": make_recurrence refused: " << made.detail);
            continue;
        }
        const auto expected = reference(e, z, rules);
        ++compared;
        // A short chain is compared over the whole year; a long one over the
        // first two days, a day in July and the day either side of each change.
        std::vector<std::pair<std::int64_t, std::int64_t>> windows;
        if (expected.size() <= 1500) {
            windows.emplace_back(year_start, year_end);
        } else {
            windows.emplace_back(year_start, year_start + 2 * 86400);
            windows.emplace_back(year_start + 180 * 86400, year_start + 181 * 86400);
            for (auto t : z.transitions) windows.emplace_back(t - 86400, t + 86400);
        }
        for (const auto& [from, to] : windows)
            if (!same_chain(*made.schedule, e, z, expected, from, to)) ++disagreements;
    }
    MESSAGE(compared, " expressions compared, ", refused, " refused as matching no day; runs for a gap: ",
            rules.gap_runs, ", in a second instance: ", rules.second_instances, ", not run in a second instance: ",
            rules.suppressed);
    CHECK(compared > (five_field_count + six_field_count) / 2);
    // The seed exercises every daylight-saving rule.
    CHECK(rules.gap_runs > 0);
    CHECK(rules.second_instances > 0);
    CHECK(rules.suppressed > 0);
    CHECK(disagreements == 0);
}
