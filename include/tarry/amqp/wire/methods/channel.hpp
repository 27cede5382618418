// Methods of class channel (20): open, flow control, close.
//
// Plain values (see methods.hpp for the codec). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"
#include "tarry/amqp/wire/methods/connection.hpp"

namespace tarry::amqp::wire {

/// channel.open (client → server).
struct channel_open {
    static constexpr std::uint16_t class_id = 20, method_id = 10;
    static constexpr std::string_view name = "channel.open";
    static constexpr bool has_content = false;
    std::string reserved_1{};  ///< "out-of-band" in 0-8; send empty

    static constexpr auto fields() {
        return std::tuple{field<wire_type::shortstr>("reserved-1", &channel_open::reserved_1)};
    }
    friend bool operator==(const channel_open&, const channel_open&) = default;
};

/// channel.open-ok (server → client).
struct channel_open_ok {
    static constexpr std::uint16_t class_id = 20, method_id = 11;
    static constexpr std::string_view name = "channel.open-ok";
    static constexpr bool has_content = false;
    std::string reserved_1{};  ///< "channel-id" in 0-8 (a longstr, unlike open's)

    static constexpr auto fields() {
        return std::tuple{field<wire_type::longstr>("reserved-1", &channel_open_ok::reserved_1)};
    }
    friend bool operator==(const channel_open_ok&, const channel_open_ok&) = default;
};

namespace detail {

/// channel.flow and channel.flow-ok: active = true lets content flow,
/// false asks the peer to stop sending content.
template <std::uint16_t MethodId, fixed_string Name>
struct flow_method {
    static constexpr std::uint16_t class_id = 20, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    bool active = true;

    static constexpr auto fields() {
        return std::tuple{field<wire_type::bit>("active", &flow_method::active)};
    }
    friend bool operator==(const flow_method&, const flow_method&) = default;
};

}  // namespace detail

/// channel.flow (either way): asks the peer to pause or resume content.
using channel_flow = detail::flow_method<20, "channel.flow">;
/// channel.flow-ok (either way): confirms the new flow state.
using channel_flow_ok = detail::flow_method<21, "channel.flow-ok">;

/// channel.close (either way): see detail::close_method.
using channel_close = detail::close_method<20, 40, "channel.close">;
/// channel.close-ok (either way).
using channel_close_ok = detail::method_without_arguments<20, 41, "channel.close-ok">;

}  // namespace tarry::amqp::wire
