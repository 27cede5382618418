// Internals shared by the contract's source files: header values as exact
// numbers, the latest supported time, RFC 3339 in microseconds, and the
// texts that reasons quote. Not installed; nothing here is public.
#pragma once

#include "tarry/contract/schedule_headers.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::contract::detail {

/// The latest due time accepted, in µs since the epoch:
/// 9999-12-31T23:59:59Z, or the last whole microsecond wall_time can hold
/// when that is earlier (2262-04-11T23:47:16.854775Z for a nanosecond
/// system_clock).
std::int64_t latest_micros() noexcept;

/// A header value read as a number of its unit (seconds, milliseconds).
struct number {
    /// The value × 10^digits, rounded up, ≥ 0; saturates at INT64_MAX.
    std::int64_t scaled = 0;
    /// The value as written, for reasons: `1.5`, `"1.5"`, `true`.
    std::string text;
    /// Empty when the value is a non-negative number; else the rest of a
    /// reason after the header name: `-1.5 is negative`, `is NaN`,
    /// `is a boolean (true), not a number`.
    std::string problem;
};

/// Reads any integer type, float, double, decimal, numeric string and (when
/// `timestamps`) an AMQP timestamp. `digits` is 6 for seconds → µs, 3 for
/// milliseconds → µs. Never throws.
number read_number(const amqp::wire::field_value& v, int digits, bool timestamps);

/// Whether `s` is a decimal number as read_number accepts it in a string:
/// `-?[0-9]+(\.[0-9]+)?`, nothing else (no spaces, exponent, hex, inf, nan).
bool is_decimal_text(std::string_view s) noexcept;

/// ceil(d × 10^digits) for a finite d ≥ 0, saturating at INT64_MAX. The
/// whole part is exact; the fraction's product is rounded once, so the
/// result is never below d × 10^digits by more than 1e-10 of a unit (d =
/// 0.05 reads as 50000 µs although that double is 2.8e-18 above 0.05).
std::int64_t ceil_scaled(double d, int digits) noexcept;

/// `s` in double quotes, cut to 64 bytes (then `...`), every byte that is
/// not printable ASCII, `"` or `\` written as \xNN.
std::string quoted(std::string_view s);

/// An RFC 3339 date-time as µs since the epoch (years 0000–9999, before
/// any wall_time range check). Nothing when malformed.
std::optional<std::int64_t> parse_rfc3339_micros(std::string_view text) noexcept;

/// µs since the epoch as RFC 3339 UTC: `2026-01-01T00:00:05Z`, with the
/// fraction only when non-zero (`.125`, trailing zeros dropped).
std::string format_rfc3339(std::int64_t micros);

}  // namespace tarry::contract::detail
