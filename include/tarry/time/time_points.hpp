// The clock vocabulary every layer shares: the two kinds of time point tarry
// uses, and the one conversion between them.
//
// Due times are std::chrono::steady_clock time points inside the library, so
// a step of the wall clock (NTP, a person setting the date) never fires a job
// early or late. Wall-clock (epoch) times from the outside (the wire, a
// user's schedule) are converted once, at the edge, by to_steady().
//
// Pure: no threads, no I/O. Header-only.
#pragma once

#include <chrono>
#include <concepts>

namespace tarry {

/// A due time inside the library.
using steady_time = std::chrono::steady_clock::time_point;
/// A due time as the outside world states it (seconds since the Unix epoch).
using wall_time = std::chrono::system_clock::time_point;

/// Something that tells both times at about the same instant: now() is a
/// steady_time that never goes backwards (copies agree), wall_now() the
/// wall-clock time. The real one is std::chrono's clocks
/// (tarry/schedule/clock.hpp); unit tests drive a fake one.
template <class C>
concept time_source = requires(const C& c) {
    { c.now() } -> std::same_as<steady_time>;
    { c.wall_now() } -> std::same_as<wall_time>;
};

namespace detail {
// base + (to - from), saturating instead of overflowing.
inline steady_time shift(steady_time base, wall_time to, wall_time from) noexcept {
    using rep = steady_time::duration::rep;
    using ns = steady_time::duration;
    const rep t = std::chrono::duration_cast<ns>(to.time_since_epoch()).count();
    const rep f = std::chrono::duration_cast<ns>(from.time_since_epoch()).count();
    const rep b = base.time_since_epoch().count();
    rep delta = 0;
    rep out = 0;
    if (__builtin_sub_overflow(t, f, &delta) || __builtin_add_overflow(b, delta, &out))
        return t > f ? steady_time::max() : steady_time::min();
    return steady_time(ns(out));
}
}  // namespace detail

/// Converts a wall-clock due time to the source's steady time, reading both
/// clocks once. A job due in the past stays in the past (it is due at once).
/// Call it once per job, where the time enters the library; never store
/// wall times inside.
/// Times too far out for steady_time saturate at its min() / max().
template <time_source Clock>
steady_time to_steady(const Clock& clock, wall_time due) {
    return detail::shift(clock.now(), due, clock.wall_now());
}

}  // namespace tarry
