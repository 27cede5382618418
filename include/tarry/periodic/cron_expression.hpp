// A cron expression: which civil (local) times match. Pure value; any
// thread; never throws after parse().
//
// Syntax (docs/periodic.md): 5 fields `m h dom mon dow`, or 6 with seconds
// first `s m h dom mon dow`, separated by blanks. Each field is `*`, a
// number, a range `a-b`, a step `*/n` or `a-b/n` or `a/n` (a to the field's
// end), or a comma list of those. Months take JAN..DEC and weekdays SUN..SAT
// (any case); weekday 7 is Sunday too. Macros: @yearly (@annually),
// @monthly, @weekly, @daily (@midnight), @hourly. When both day-of-month and
// day-of-week are restricted (neither starts with `*`), a day matches if
// either does (Vixie cron); else both must.
#pragma once

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace tarry::periodic {

/// A civil time in some zone, to the second (no zone attached).
using civil_seconds = std::chrono::local_seconds;

struct cron_parse_result;

/// Which civil (local) times a cron expression matches (syntax: see this
/// header's opening comment). Made by parse_cron; a pure value, any thread.
class cron_expression {
public:
    /// The text it was parsed from, blanks collapsed to single spaces.
    const std::string& text() const noexcept { return text_; }
    /// Whether the civil time `t` matches every field (dom/dow per the rule above).
    bool matches(civil_seconds t) const noexcept;
    /// The first matching civil time in [from, before); nothing when none.
    /// Cost grows with the days searched, not the seconds.
    std::optional<civil_seconds> first_match(civil_seconds from, civil_seconds before) const noexcept;
    /// True when the hour field is `*` or has a step: such a schedule follows
    /// the wall clock across daylight-saving changes (it skips the hour that
    /// does not exist and runs in both instances of a repeated hour); any
    /// other runs once at the first instant after a gap and once in the
    /// first instance of a repeated hour.
    bool follows_clock() const noexcept { return follows_clock_; }

private:
    friend cron_parse_result parse_cron(std::string_view text);
    bool day_matches(std::chrono::year_month_day d) const noexcept;

    std::string text_;
    std::bitset<60> seconds_, minutes_;
    std::bitset<24> hours_;
    std::bitset<32> days_;      // 1..31
    std::bitset<13> months_;    // 1..12
    std::bitset<7> weekdays_;   // 0 = Sunday
    bool dom_restricted_ = false, dow_restricted_ = false;
    bool follows_clock_ = false;
};

/// The result of parse_cron: on success `error` is empty; on failure it is
/// errc::invalid_cron and `detail` names the field and token, such as
/// "hour: '25' is not in 0-23".
struct cron_parse_result {
    std::optional<cron_expression> expression;  ///< the expression; nothing on failure
    std::error_code error;                      ///< empty on success
    std::string detail;                         ///< what was wrong; empty on success
};

/// Parses `text`. Refuses a wrong field count, a value out of its field's
/// range, a reversed range, a step of 0, an unknown name or macro, and an
/// expression that matches no day at all (e.g. `0 0 30 2 *`).
cron_parse_result parse_cron(std::string_view text);

}  // namespace tarry::periodic
