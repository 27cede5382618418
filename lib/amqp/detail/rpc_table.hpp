// Which reply answers which synchronous request.
#pragma once

#include "tarry/amqp/wire/methods.hpp"

#include <cstdint>
#include <optional>

namespace tarry::amqp::detail {

/// The reply (or, for basic.get, one of two replies) a synchronous request
/// waits for.
struct reply_spec {
    std::uint16_t class_id = 0;
    std::uint16_t method_id = 0;
    std::uint16_t alt_method_id = 0;  ///< 0 = none

    bool matches(std::uint16_t c, std::uint16_t m) const noexcept {
        return c == class_id && (m == method_id || (alt_method_id != 0 && m == alt_method_id));
    }
};

/// The reply a client request waits for; nothing for asynchronous methods
/// (publish, ack, nack, reject, recover-async) and for requests sent with
/// no-wait.
std::optional<reply_spec> expected_reply(const wire::method& request) noexcept;

/// The (class, method) ids of the method held.
inline std::pair<std::uint16_t, std::uint16_t> ids_of(const wire::method& m) noexcept {
    const auto& i = wire::info_of(m);
    return {i.class_id, i.method_id};
}

}  // namespace tarry::amqp::detail
