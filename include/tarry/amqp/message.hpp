// Messages as the client hands them to and from the user.
//
// Plain values: a message owns its properties and body; copy or move it
// freely between threads (no shared state). The property and field-table
// types are the codec's (tarry/amqp/wire/), re-exported here.
#pragma once

#include "tarry/amqp/error.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/properties.hpp"
#include "tarry/amqp/wire/unreadable_content.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tarry::amqp {

using wire::basic_properties;
using wire::byte_array;
using wire::decimal_value;
using wire::field_array;
using wire::field_table;
using wire::field_value;
using wire::timestamp_value;
using wire::unreadable_content;
using wire::void_value;

/// Properties (all 14 basic properties, headers among them) and a body.
struct message {
    basic_properties properties;     ///< its properties, headers among them
    std::vector<std::uint8_t> body;  ///< its body, any bytes

    message() = default;
    /// These properties and this body.
    message(basic_properties p, std::vector<std::uint8_t> b)
        : properties(std::move(p)), body(std::move(b)) {}
    /// A message whose body is the bytes of `text`.
    explicit message(std::string_view text, basic_properties p = {})
        : properties(std::move(p)), body(text.begin(), text.end()) {}

    /// The body as text (a view into body; valid while the message lives).
    std::string_view body_view() const noexcept {
        return {reinterpret_cast<const char*>(body.data()), body.size()};
    }
    /// Equal when properties and body are.
    friend bool operator==(const message&, const message&) = default;
};

/// A message the broker delivered to a consumer (basic.deliver) or handed
/// out by basic.get.
struct delivery {
    std::string consumer_tag;     ///< empty for basic.get
    std::uint64_t delivery_tag = 0;  ///< per channel, from 1; what ack/nack/reject take
    bool redelivered = false;     ///< delivered before and not acknowledged
    std::string exchange;         ///< where it was published ("" = default exchange)
    std::string routing_key;      ///< the routing key it was published with
    message msg;                  ///< its properties and body
    /// Set when the content could not be read (properties that do not
    /// decode, a body above connection_config::max_body_size): `msg` then
    /// holds what could be read, and the delivery still needs settling
    /// (ack, nack or reject) like any other. Empty for a readable one.
    std::optional<unreadable_content> unreadable;
};

/// The result of basic.get when the queue had a message.
struct get_result {
    delivery item;                    ///< the message (its consumer_tag empty)
    std::uint32_t message_count = 0;  ///< messages left in the queue
};

/// A mandatory message the broker could not route (basic.return). It was
/// not enqueued anywhere, even though (on a confirm channel) an ack for it
/// follows.
struct returned_message {
    broker_reply reply;  ///< usually 312 NO_ROUTE
    std::string exchange;     ///< where it was published
    std::string routing_key;  ///< the routing key it was published with
    message msg;              ///< the message as it was published
};

}  // namespace tarry::amqp
