// One occurrence of a periodic schedule: its identity on the wire and what
// to do with it when it falls due. Pure functions; any thread.
//
// An occurrence reaches the queue as an ordinary job whose message_id is
// `<schedule id>@<nominal>`: the nominal time in epoch seconds, decimal,
// at most 3 fraction digits, no trailing zeros ("tick@1795500000",
// "tick@1795500000.25"). Headers x-tarry-schedule and x-tarry-nominal say
// the same (docs/design.md).
#pragma once

#include "tarry/periodic/recurrence.hpp"
#include "tarry/time/time_points.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::periodic {

/// The nominal time as the message_id writes it: "1795500000.25". Negative
/// times (before 1970) are written with a leading '-'. Sub-millisecond
/// parts are dropped (nominal times are whole milliseconds).
std::string format_nominal(wall_time nominal);
/// Reads format_nominal's text back; nothing on any other text (a sign
/// other than a leading '-', more than 3 fraction digits, a trailing zero
/// in the fraction, a bare '.', more than 15 integer digits).
std::optional<wall_time> parse_nominal(std::string_view text);

/// `<schedule_id>@<nominal>`.
std::string occurrence_id(std::string_view schedule_id, wall_time nominal);

/// The number an occurrence carries in the chain (1 for the first); a
/// schedule's limit bounds it.
using occurrence_number = std::uint64_t;

/// What to do with occurrence `number` of `nominal` when it falls due at `now`.
struct release_decision {
    bool run = false;                      ///< run the handler for it
    std::optional<wall_time> successor;    ///< the next occurrence to publish; nothing: the chain ends
    occurrence_number successor_number = 0; ///< the successor's number: number + 1
    bool misfired = false;                 ///< found later than misfire_threshold
};

/// On time (now - nominal <= misfire_threshold): run it; the successor is
/// the next nominal time after `nominal` (never after `now`: no drift).
/// Misfired: by the spec's policy (recurrence.hpp). run_once runs it and
/// continues after `now`; skip does not run it and continues after `now`;
/// catch_up runs it if it is among the catch_up_limit latest occurrences in
/// [nominal, now], continuing after `nominal`, else does not run it and
/// continues from the first of those. A successor past `limit` or the end
/// is none. A nominal in the future (a clock stepped back) counts as on time.
/// catch_up costs one step per missed occurrence.
release_decision on_release(const recurrence& schedule, wall_time nominal, occurrence_number number, wall_time now);

}  // namespace tarry::periodic
