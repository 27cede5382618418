// Methods of class channel (20): open, flow control, close.
//
// Plain values (see methods.hpp for the codec). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"
#include "tarry/amqp/wire/methods/connection.hpp"

namespace tarry::amqp::wire {

/// channel.open (client → server).
struct channel_open {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 20, method_id = 10;
    static constexpr std::string_view name = "channel.open";
    static constexpr bool has_content = false;
    ///@}
    std::string reserved_1{};  ///< "out-of-band" in 0-8; send empty

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::shortstr>("reserved-1", &channel_open::reserved_1)};
    }
    /// Equal when every argument is.
    friend bool operator==(const channel_open&, const channel_open&) = default;
};

/// channel.open-ok (server → client).
struct channel_open_ok {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 20, method_id = 11;
    static constexpr std::string_view name = "channel.open-ok";
    static constexpr bool has_content = false;
    ///@}
    std::string reserved_1{};  ///< "channel-id" in 0-8 (a longstr, unlike open's)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::longstr>("reserved-1", &channel_open_ok::reserved_1)};
    }
    /// Equal when every argument is.
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

/// channel.flow (either way): asks the peer to pause (active = false) or
/// resume (active = true) sending content.
using channel_flow = detail::flow_method<20, "channel.flow">;
/// channel.flow-ok (either way): confirms the new flow state (active).
using channel_flow_ok = detail::flow_method<21, "channel.flow-ok">;

/// channel.close (either way): why the channel ends: reply_code and
/// reply_text, and the method that caused it (failing_class_id,
/// failing_method_id; 0 if none).
using channel_close = detail::close_method<20, 40, "channel.close">;
/// channel.close-ok (either way).
using channel_close_ok = detail::method_without_arguments<20, 41, "channel.close-ok">;

}  // namespace tarry::amqp::wire
