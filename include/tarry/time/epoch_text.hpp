// Wall-clock times as seconds since the Unix epoch: the one rounding rule
// (truncation to the microsecond) and the one text form that events, /jobs,
// /metrics, the x-tarry-first-attempt header and the samples all use, so
// they print a time identically; and the whole seconds of a message's
// timestamp property; and back from either number to a time.
//
// Pure: no threads, no I/O. Header-only.
#pragma once

#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tarry {

/// Microseconds since the Unix epoch, truncated toward zero (a time before
/// the epoch is negative).
inline std::int64_t epoch_microseconds(wall_time t) noexcept {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

/// epoch_microseconds(t) as seconds in a double (a header's number, such
/// as x-tarry-first-attempt; exact to the µs until about 2255).
inline double epoch_seconds_number(wall_time t) noexcept {
    return static_cast<double>(epoch_microseconds(t)) / 1e6;
}

/// Whole seconds since the Unix epoch, floored; 0 for a time before the
/// epoch: the AMQP timestamp property of what is written at `t`.
inline std::uint64_t epoch_whole_seconds(wall_time t) noexcept {
    const auto s = std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
    return s < 0 ? 0 : static_cast<std::uint64_t>(s);
}

/// The time `s` whole seconds after the Unix epoch (a timestamp property),
/// kept within wall_time's range: the inverse of epoch_whole_seconds.
inline wall_time from_epoch_whole_seconds(std::uint64_t s) noexcept {
    const auto max_s = std::chrono::floor<std::chrono::seconds>(wall_time::max().time_since_epoch()).count();
    const auto kept = s > static_cast<std::uint64_t>(max_s) ? max_s : static_cast<std::int64_t>(s);
    return wall_time{std::chrono::seconds(kept)};
}

/// The time `us` microseconds from the Unix epoch, kept within wall_time's
/// range: the inverse of epoch_microseconds.
inline wall_time from_epoch_microseconds(std::int64_t us) noexcept {
    const auto hi = std::chrono::floor<std::chrono::microseconds>(wall_time::max().time_since_epoch()).count();
    const auto lo = std::chrono::ceil<std::chrono::microseconds>(wall_time::min().time_since_epoch()).count();
    return wall_time{std::chrono::microseconds(us > hi ? hi : us < lo ? lo : us)};
}

/// `t` as seconds since the Unix epoch with exactly six decimals
/// (epoch_microseconds), e.g. "1767225600.250000"; "-0.500000" before the
/// epoch. Valid as a JSON number and as a Prometheus sample value.
inline std::string epoch_seconds_text(wall_time t) {
    const std::int64_t us = epoch_microseconds(t);
    // The magnitude as unsigned: -INT64_MIN does not fit an int64.
    const std::uint64_t magnitude = us < 0 ? 0 - static_cast<std::uint64_t>(us) : static_cast<std::uint64_t>(us);
    char text[32];
    std::snprintf(text, sizeof text, "%s%llu.%06llu", us < 0 ? "-" : "",
                  static_cast<unsigned long long>(magnitude / 1'000'000),
                  static_cast<unsigned long long>(magnitude % 1'000'000));
    return text;
}

}  // namespace tarry
