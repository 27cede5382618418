// The errors of the periodic layer: a schedule that cannot be built. Every
// operation that can refuse returns one of these codes with a detail that
// names the field and the token at fault.
#pragma once

#include <string>
#include <system_error>

namespace tarry::periodic {

/// Why a schedule cannot be built (periodic_category()).
enum class errc {
    invalid_cron = 1,   ///< a cron expression that does not parse, or never matches
    unknown_time_zone,  ///< a zone name the system's tz database does not have
    invalid_schedule,   ///< any other field of a schedule_spec (interval, offset, start/end, limit)
};

/// The category of errc; its name() is "tarry.periodic".
const std::error_category& periodic_category() noexcept;

/// `e` as a std::error_code of periodic_category(); found by
/// argument-dependent lookup, so an errc converts to std::error_code.
inline std::error_code make_error_code(errc e) noexcept { return {static_cast<int>(e), periodic_category()}; }

}  // namespace tarry::periodic

template <>
struct std::is_error_code_enum<tarry::periodic::errc> : std::true_type {};
