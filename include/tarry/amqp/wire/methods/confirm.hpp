// Methods of class confirm (85): publisher confirms (RabbitMQ extension, in
// the 0-9-1-rabbit spec). After select-ok the broker acks or nacks every
// publish on the channel, counting from 1.
//
// Plain values (see methods.hpp for the codec). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"

namespace tarry::amqp::wire {

/// confirm.select (client → server). The spec spells the argument "nowait".
struct confirm_select {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 85, method_id = 10;
    static constexpr std::string_view name = "confirm.select";
    static constexpr bool has_content = false;
    ///@}
    bool nowait = false;  ///< no select-ok in reply

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::bit>("nowait", &confirm_select::nowait)};
    }
    /// Equal when every argument is.
    friend bool operator==(const confirm_select&, const confirm_select&) = default;
};

/// confirm.select-ok (server → client).
using confirm_select_ok = detail::method_without_arguments<85, 11, "confirm.select-ok">;

}  // namespace tarry::amqp::wire
