// Methods of class basic (60): QoS, consumers, publishing, delivery,
// polling, acknowledgements. publish, return, deliver and get-ok are
// followed by content (a header frame and body frames), has_content = true.
//
// Plain values (see methods.hpp for the codec). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"

namespace tarry::amqp::wire {

/// basic.qos (client → server): the prefetch window. prefetch_count is the
/// number of unacknowledged deliveries (0 = unlimited); global=false applies
/// it per consumer (RabbitMQ's reading). RabbitMQ refuses prefetch_size ≠ 0.
struct basic_qos {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 10;
    static constexpr std::string_view name = "basic.qos";
    static constexpr bool has_content = false;
    ///@}
    std::uint32_t prefetch_size = 0;  ///< unacknowledged bytes; RabbitMQ takes only 0 (no limit)
    std::uint16_t prefetch_count = 0;  ///< unacknowledged deliveries; 0 = no limit
    bool global = false;  ///< false: for each consumer of the channel; true: shared by them all

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_qos;
        return std::tuple{field<long_>("prefetch-size", &S::prefetch_size),
                          field<short_>("prefetch-count", &S::prefetch_count),
                          field<bit>("global", &S::global)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_qos&, const basic_qos&) = default;
};

/// basic.qos-ok (server → client).
using basic_qos_ok = detail::method_without_arguments<60, 11, "basic.qos-ok">;

/// basic.consume (client → server): start a consumer on a queue; an empty
/// consumer_tag asks the server to make one up.
struct basic_consume {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 20;
    static constexpr std::string_view name = "basic.consume";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue to consume from
    std::string consumer_tag{};  ///< the consumer's tag; empty: the server makes one up
    bool no_local = false;  ///< not this connection's publishes (RabbitMQ ignores it)
    bool no_ack = false;  ///< deliveries count as acknowledged once sent
    bool exclusive = false;  ///< the queue's only consumer
    bool no_wait = false;  ///< no consume-ok in reply
    field_table arguments{};  ///< consumer arguments (x-priority, x-consumer-timeout, ...)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_consume;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<shortstr>("consumer-tag", &S::consumer_tag),
                          field<bit>("no-local", &S::no_local),
                          field<bit>("no-ack", &S::no_ack),
                          field<bit>("exclusive", &S::exclusive),
                          field<bit>("no-wait", &S::no_wait),
                          field<table>("arguments", &S::arguments)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_consume&, const basic_consume&) = default;
};

namespace detail {

/// basic.consume-ok and basic.cancel-ok: the consumer concerned.
template <std::uint16_t MethodId, fixed_string Name>
struct consumer_tag_method {
    static constexpr std::uint16_t class_id = 60, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    std::string consumer_tag{};

    static constexpr auto fields() {
        return std::tuple{
            field<wire_type::shortstr>("consumer-tag", &consumer_tag_method::consumer_tag)};
    }
    friend bool operator==(const consumer_tag_method&, const consumer_tag_method&) = default;
};

/// basic.recover-async and basic.recover: redeliver every unacknowledged
/// delivery of the channel; requeue=false sends them to the same consumer.
template <std::uint16_t MethodId, fixed_string Name>
struct recover_method {
    static constexpr std::uint16_t class_id = 60, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    bool requeue = false;

    static constexpr auto fields() {
        return std::tuple{field<wire_type::bit>("requeue", &recover_method::requeue)};
    }
    friend bool operator==(const recover_method&, const recover_method&) = default;
};

}  // namespace detail

/// basic.consume-ok (server → client): the consumer's tag (consumer_tag).
using basic_consume_ok = detail::consumer_tag_method<21, "basic.consume-ok">;

/// basic.cancel (either way): stop a consumer. RabbitMQ sends it when the
/// queue goes away, to clients that advertise consumer_cancel_notify.
struct basic_cancel {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 30;
    static constexpr std::string_view name = "basic.cancel";
    static constexpr bool has_content = false;
    ///@}
    std::string consumer_tag{};  ///< the consumer to stop
    bool no_wait = false;  ///< no cancel-ok in reply

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_cancel;
        return std::tuple{field<shortstr>("consumer-tag", &S::consumer_tag),
                          field<bit>("no-wait", &S::no_wait)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_cancel&, const basic_cancel&) = default;
};

/// basic.cancel-ok (either way): the consumer stopped (consumer_tag).
using basic_cancel_ok = detail::consumer_tag_method<31, "basic.cancel-ok">;

/// basic.publish (client → server), followed by content. mandatory asks
/// for a basic.return when no queue gets the message. RabbitMQ refuses
/// immediate (540).
struct basic_publish {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 40;
    static constexpr std::string_view name = "basic.publish";
    static constexpr bool has_content = true;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string exchange{};  ///< where to publish; empty: the default exchange
    std::string routing_key{};  ///< the routing key (a queue's name, through the default exchange)
    bool mandatory = false;  ///< return the message (basic.return) when no queue takes it
    bool immediate = false;  ///< refused by RabbitMQ (540): leave it false

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_publish;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<bit>("mandatory", &S::mandatory),
                          field<bit>("immediate", &S::immediate)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_publish&, const basic_publish&) = default;
};

/// basic.return (server → client), followed by the returned content: an
/// unroutable mandatory message (reply_code 312 NO_ROUTE).
struct basic_return {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 50;
    static constexpr std::string_view name = "basic.return";
    static constexpr bool has_content = true;
    ///@}
    std::uint16_t reply_code = 0;  ///< why: 312 NO_ROUTE for an unroutable mandatory message
    std::string reply_text{};  ///< the broker's words
    std::string exchange{};  ///< where it was published
    std::string routing_key{};  ///< its routing key

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_return;
        return std::tuple{field<short_>("reply-code", &S::reply_code),
                          field<shortstr>("reply-text", &S::reply_text),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_return&, const basic_return&) = default;
};

/// basic.deliver (server → client), followed by content: a message for a
/// consumer. delivery_tag counts per channel from 1.
struct basic_deliver {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 60;
    static constexpr std::string_view name = "basic.deliver";
    static constexpr bool has_content = true;
    ///@}
    std::string consumer_tag{};  ///< the consumer it is for
    std::uint64_t delivery_tag = 0;  ///< per channel from 1; what an ack, nack or reject names
    bool redelivered = false;  ///< delivered before and not acknowledged
    std::string exchange{};  ///< where it was published
    std::string routing_key{};  ///< its routing key

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_deliver;
        return std::tuple{field<shortstr>("consumer-tag", &S::consumer_tag),
                          field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("redelivered", &S::redelivered),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_deliver&, const basic_deliver&) = default;
};

/// basic.get (client → server): fetch one message, if any.
struct basic_get {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 70;
    static constexpr std::string_view name = "basic.get";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue to fetch from
    bool no_ack = false;  ///< the message counts as acknowledged once sent

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_get;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<bit>("no-ack", &S::no_ack)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_get&, const basic_get&) = default;
};

/// basic.get-ok (server → client), followed by content; message_count is
/// what is left in the queue.
struct basic_get_ok {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 71;
    static constexpr std::string_view name = "basic.get-ok";
    static constexpr bool has_content = true;
    ///@}
    std::uint64_t delivery_tag = 0;  ///< per channel from 1; what an ack, nack or reject names
    bool redelivered = false;  ///< delivered before and not acknowledged
    std::string exchange{};  ///< where it was published
    std::string routing_key{};  ///< its routing key
    std::uint32_t message_count = 0;  ///< messages left in the queue

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_get_ok;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("redelivered", &S::redelivered),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<long_>("message-count", &S::message_count)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_get_ok&, const basic_get_ok&) = default;
};

/// basic.get-empty (server → client): the queue had nothing.
struct basic_get_empty {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 72;
    static constexpr std::string_view name = "basic.get-empty";
    static constexpr bool has_content = false;
    ///@}
    std::string reserved_1{};  ///< "cluster-id" in 0-8

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::shortstr>("reserved-1", &basic_get_empty::reserved_1)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_get_empty&, const basic_get_empty&) = default;
};

/// basic.ack (either way): from the client, a delivery is done; from the
/// broker on a confirm channel, a publish is confirmed. multiple = every
/// tag up to and including delivery_tag.
struct basic_ack {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 80;
    static constexpr std::string_view name = "basic.ack";
    static constexpr bool has_content = false;
    ///@}
    std::uint64_t delivery_tag = 0;  ///< the delivery (from the broker: the publish) acknowledged
    bool multiple = false;  ///< every tag up to and including delivery_tag

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_ack;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("multiple", &S::multiple)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_ack&, const basic_ack&) = default;
};

/// basic.reject (client → server): give one delivery back; requeue=false
/// dead-letters (or drops) it.
struct basic_reject {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 90;
    static constexpr std::string_view name = "basic.reject";
    static constexpr bool has_content = false;
    ///@}
    std::uint64_t delivery_tag = 0;  ///< the delivery given back
    bool requeue = false;  ///< true: back to the queue; false: dead-lettered (or dropped)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_reject;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("requeue", &S::requeue)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_reject&, const basic_reject&) = default;
};

/// basic.recover-async (client → server; deprecated): as recover, no reply.
using basic_recover_async = detail::recover_method<100, "basic.recover-async">;
/// basic.recover (client → server), answered by recover-ok: redeliver every
/// unacknowledged delivery of the channel; requeue=false sends them to the
/// same consumer.
using basic_recover = detail::recover_method<110, "basic.recover">;
/// basic.recover-ok (server → client).
using basic_recover_ok = detail::method_without_arguments<60, 111, "basic.recover-ok">;

/// basic.nack (either way; RabbitMQ extension in the 0-9-1-rabbit spec):
/// from the client, reject one or (multiple) many deliveries, requeue=false
/// dead-letters (or drops) them; from the broker on a confirm channel, the
/// publish was not taken.
struct basic_nack {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 60, method_id = 120;
    static constexpr std::string_view name = "basic.nack";
    static constexpr bool has_content = false;
    ///@}
    std::uint64_t delivery_tag = 0;  ///< the delivery (from the broker: the publish) refused
    bool multiple = false;  ///< every tag up to and including delivery_tag
    bool requeue = false;  ///< true: back to the queue; false: dead-lettered (or dropped)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_nack;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("multiple", &S::multiple),
                          field<bit>("requeue", &S::requeue)};
    }
    /// Equal when every argument is.
    friend bool operator==(const basic_nack&, const basic_nack&) = default;
};

}  // namespace tarry::amqp::wire
