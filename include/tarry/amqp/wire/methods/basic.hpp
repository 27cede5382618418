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
    static constexpr std::uint16_t class_id = 60, method_id = 10;
    static constexpr std::string_view name = "basic.qos";
    static constexpr bool has_content = false;
    std::uint32_t prefetch_size = 0;
    std::uint16_t prefetch_count = 0;
    bool global = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_qos;
        return std::tuple{field<long_>("prefetch-size", &S::prefetch_size),
                          field<short_>("prefetch-count", &S::prefetch_count),
                          field<bit>("global", &S::global)};
    }
    friend bool operator==(const basic_qos&, const basic_qos&) = default;
};

/// basic.qos-ok (server → client).
using basic_qos_ok = detail::method_without_arguments<60, 11, "basic.qos-ok">;

/// basic.consume (client → server): start a consumer on a queue; an empty
/// consumer_tag asks the server to make one up.
struct basic_consume {
    static constexpr std::uint16_t class_id = 60, method_id = 20;
    static constexpr std::string_view name = "basic.consume";
    static constexpr bool has_content = false;
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};
    std::string consumer_tag{};
    bool no_local = false;
    bool no_ack = false;
    bool exclusive = false;
    bool no_wait = false;
    field_table arguments{};

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

/// basic.consume-ok (server → client): the consumer's tag.
using basic_consume_ok = detail::consumer_tag_method<21, "basic.consume-ok">;

/// basic.cancel (either way): stop a consumer. RabbitMQ sends it when the
/// queue goes away, to clients that advertise consumer_cancel_notify.
struct basic_cancel {
    static constexpr std::uint16_t class_id = 60, method_id = 30;
    static constexpr std::string_view name = "basic.cancel";
    static constexpr bool has_content = false;
    std::string consumer_tag{};
    bool no_wait = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_cancel;
        return std::tuple{field<shortstr>("consumer-tag", &S::consumer_tag),
                          field<bit>("no-wait", &S::no_wait)};
    }
    friend bool operator==(const basic_cancel&, const basic_cancel&) = default;
};

/// basic.cancel-ok (either way).
using basic_cancel_ok = detail::consumer_tag_method<31, "basic.cancel-ok">;

/// basic.publish (client → server), followed by content. mandatory asks
/// for a basic.return when no queue gets the message. RabbitMQ refuses
/// immediate (540).
struct basic_publish {
    static constexpr std::uint16_t class_id = 60, method_id = 40;
    static constexpr std::string_view name = "basic.publish";
    static constexpr bool has_content = true;
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string exchange{};
    std::string routing_key{};
    bool mandatory = false;
    bool immediate = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_publish;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<bit>("mandatory", &S::mandatory),
                          field<bit>("immediate", &S::immediate)};
    }
    friend bool operator==(const basic_publish&, const basic_publish&) = default;
};

/// basic.return (server → client), followed by the returned content: an
/// unroutable mandatory message (reply_code 312 NO_ROUTE).
struct basic_return {
    static constexpr std::uint16_t class_id = 60, method_id = 50;
    static constexpr std::string_view name = "basic.return";
    static constexpr bool has_content = true;
    std::uint16_t reply_code = 0;
    std::string reply_text{};
    std::string exchange{};
    std::string routing_key{};

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_return;
        return std::tuple{field<short_>("reply-code", &S::reply_code),
                          field<shortstr>("reply-text", &S::reply_text),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key)};
    }
    friend bool operator==(const basic_return&, const basic_return&) = default;
};

/// basic.deliver (server → client), followed by content: a message for a
/// consumer. delivery_tag counts per channel from 1.
struct basic_deliver {
    static constexpr std::uint16_t class_id = 60, method_id = 60;
    static constexpr std::string_view name = "basic.deliver";
    static constexpr bool has_content = true;
    std::string consumer_tag{};
    std::uint64_t delivery_tag = 0;
    bool redelivered = false;
    std::string exchange{};
    std::string routing_key{};

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_deliver;
        return std::tuple{field<shortstr>("consumer-tag", &S::consumer_tag),
                          field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("redelivered", &S::redelivered),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key)};
    }
    friend bool operator==(const basic_deliver&, const basic_deliver&) = default;
};

/// basic.get (client → server): fetch one message, if any.
struct basic_get {
    static constexpr std::uint16_t class_id = 60, method_id = 70;
    static constexpr std::string_view name = "basic.get";
    static constexpr bool has_content = false;
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};
    bool no_ack = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_get;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<bit>("no-ack", &S::no_ack)};
    }
    friend bool operator==(const basic_get&, const basic_get&) = default;
};

/// basic.get-ok (server → client), followed by content; message_count is
/// what is left in the queue.
struct basic_get_ok {
    static constexpr std::uint16_t class_id = 60, method_id = 71;
    static constexpr std::string_view name = "basic.get-ok";
    static constexpr bool has_content = true;
    std::uint64_t delivery_tag = 0;
    bool redelivered = false;
    std::string exchange{};
    std::string routing_key{};
    std::uint32_t message_count = 0;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_get_ok;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("redelivered", &S::redelivered),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<long_>("message-count", &S::message_count)};
    }
    friend bool operator==(const basic_get_ok&, const basic_get_ok&) = default;
};

/// basic.get-empty (server → client): the queue had nothing.
struct basic_get_empty {
    static constexpr std::uint16_t class_id = 60, method_id = 72;
    static constexpr std::string_view name = "basic.get-empty";
    static constexpr bool has_content = false;
    std::string reserved_1{};  ///< "cluster-id" in 0-8

    static constexpr auto fields() {
        return std::tuple{field<wire_type::shortstr>("reserved-1", &basic_get_empty::reserved_1)};
    }
    friend bool operator==(const basic_get_empty&, const basic_get_empty&) = default;
};

/// basic.ack (either way): from the client, a delivery is done; from the
/// broker on a confirm channel, a publish is confirmed. multiple = every
/// tag up to and including delivery_tag.
struct basic_ack {
    static constexpr std::uint16_t class_id = 60, method_id = 80;
    static constexpr std::string_view name = "basic.ack";
    static constexpr bool has_content = false;
    std::uint64_t delivery_tag = 0;
    bool multiple = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_ack;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("multiple", &S::multiple)};
    }
    friend bool operator==(const basic_ack&, const basic_ack&) = default;
};

/// basic.reject (client → server): give one delivery back; requeue=false
/// dead-letters (or drops) it.
struct basic_reject {
    static constexpr std::uint16_t class_id = 60, method_id = 90;
    static constexpr std::string_view name = "basic.reject";
    static constexpr bool has_content = false;
    std::uint64_t delivery_tag = 0;
    bool requeue = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_reject;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("requeue", &S::requeue)};
    }
    friend bool operator==(const basic_reject&, const basic_reject&) = default;
};

/// basic.recover-async (client → server; deprecated): as recover, no reply.
using basic_recover_async = detail::recover_method<100, "basic.recover-async">;
/// basic.recover (client → server), answered by recover-ok.
using basic_recover = detail::recover_method<110, "basic.recover">;
/// basic.recover-ok (server → client).
using basic_recover_ok = detail::method_without_arguments<60, 111, "basic.recover-ok">;

/// basic.nack (either way; RabbitMQ extension in the 0-9-1-rabbit spec):
/// from the client, reject one or (multiple) many deliveries, requeue=false
/// dead-letters (or drops) them; from the broker on a confirm channel, the
/// publish was not taken.
struct basic_nack {
    static constexpr std::uint16_t class_id = 60, method_id = 120;
    static constexpr std::string_view name = "basic.nack";
    static constexpr bool has_content = false;
    std::uint64_t delivery_tag = 0;
    bool multiple = false;
    bool requeue = false;

    static constexpr auto fields() {
        using enum wire_type;
        using S = basic_nack;
        return std::tuple{field<longlong>("delivery-tag", &S::delivery_tag),
                          field<bit>("multiple", &S::multiple),
                          field<bit>("requeue", &S::requeue)};
    }
    friend bool operator==(const basic_nack&, const basic_nack&) = default;
};

}  // namespace tarry::amqp::wire
