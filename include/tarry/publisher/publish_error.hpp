// Errors of the publisher layer (category "tarry.publish"), beside the AMQP
// client's own (tarry/amqp/error.hpp).
#pragma once

#include <system_error>

namespace tarry {

/// Why a publish failed, beside the AMQP client's own codes
/// (publish_category()).
enum class publish_errc {
    delay_exceeds_max = 1,  ///< the schedule is further out than max_delay; nothing was sent
    unroutable,             ///< mandatory and no queue took it (basic.return)
    invalid_schedule,       ///< due before 1970 or past the clock's range, or a NaN delay; nothing was sent
    /// No confirm within publisher_options::confirm_timeout: the message
    /// may still have been taken (at least once); its channel was closed.
    confirm_timeout,
};

/// The category of publish_errc; its name() is "tarry.publish".
const std::error_category& publish_category() noexcept;

/// `e` as a std::error_code of publish_category(); found by
/// argument-dependent lookup, so a publish_errc converts to std::error_code.
inline std::error_code make_error_code(publish_errc e) noexcept {
    return {static_cast<int>(e), publish_category()};
}

}  // namespace tarry

template <>
struct std::is_error_code_enum<tarry::publish_errc> : std::true_type {};
