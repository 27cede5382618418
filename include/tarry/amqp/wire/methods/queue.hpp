// Methods of class queue (50): declare, bind, unbind, purge, delete.
//
// Plain values (see methods.hpp for the codec). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"

namespace tarry::amqp::wire {

/// queue.declare (client → server): create the queue (an empty name asks
/// the server to make one up), or with passive only check that it exists.
/// Queue type, TTLs and dead-lettering go in arguments (x-queue-type, ...).
struct queue_declare {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 50, method_id = 10;
    static constexpr std::string_view name = "queue.declare";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue's name; empty: the server makes one up
    bool passive = false;  ///< only check that it exists (404 when it does not)
    bool durable = false;  ///< survives a broker restart
    bool exclusive = false;  ///< this connection's alone, deleted when it closes
    bool auto_delete = false;  ///< deleted when its last consumer goes
    bool no_wait = false;  ///< no declare-ok in reply
    field_table arguments{};  ///< x-queue-type, x-message-ttl, x-dead-letter-exchange, ...

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = queue_declare;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<bit>("passive", &S::passive),
                          field<bit>("durable", &S::durable),
                          field<bit>("exclusive", &S::exclusive),
                          field<bit>("auto-delete", &S::auto_delete),
                          field<bit>("no-wait", &S::no_wait),
                          field<table>("arguments", &S::arguments)};
    }
    /// Equal when every argument is.
    friend bool operator==(const queue_declare&, const queue_declare&) = default;
};

/// queue.declare-ok (server → client): the queue's name (as made up by the
/// server, if asked) and its current message and consumer counts.
struct queue_declare_ok {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 50, method_id = 11;
    static constexpr std::string_view name = "queue.declare-ok";
    static constexpr bool has_content = false;
    ///@}
    std::string queue{};  ///< the queue's name (the server's own when it made one up)
    std::uint32_t message_count = 0;  ///< messages ready in it
    std::uint32_t consumer_count = 0;  ///< its consumers

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = queue_declare_ok;
        return std::tuple{field<shortstr>("queue", &S::queue),
                          field<long_>("message-count", &S::message_count),
                          field<long_>("consumer-count", &S::consumer_count)};
    }
    /// Equal when every argument is.
    friend bool operator==(const queue_declare_ok&, const queue_declare_ok&) = default;
};

/// queue.bind (client → server): route messages from exchange to queue.
struct queue_bind {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 50, method_id = 20;
    static constexpr std::string_view name = "queue.bind";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue to bind
    std::string exchange{};  ///< the exchange to bind it to
    std::string routing_key{};  ///< the binding key
    bool no_wait = false;  ///< no bind-ok in reply
    field_table arguments{};  ///< binding arguments (what a headers exchange matches)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = queue_bind;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<bit>("no-wait", &S::no_wait),
                          field<table>("arguments", &S::arguments)};
    }
    /// Equal when every argument is.
    friend bool operator==(const queue_bind&, const queue_bind&) = default;
};

/// queue.bind-ok (server → client).
using queue_bind_ok = detail::method_without_arguments<50, 21, "queue.bind-ok">;

/// queue.purge (client → server): drop the queue's ready messages.
struct queue_purge {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 50, method_id = 30;
    static constexpr std::string_view name = "queue.purge";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue to empty
    bool no_wait = false;  ///< no purge-ok in reply

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = queue_purge;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<bit>("no-wait", &S::no_wait)};
    }
    /// Equal when every argument is.
    friend bool operator==(const queue_purge&, const queue_purge&) = default;
};

namespace detail {

/// queue.purge-ok and queue.delete-ok: how many messages went away.
template <std::uint16_t MethodId, fixed_string Name>
struct message_count_method {
    static constexpr std::uint16_t class_id = 50, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    std::uint32_t message_count = 0;

    static constexpr auto fields() {
        return std::tuple{
            field<wire_type::long_>("message-count", &message_count_method::message_count)};
    }
    friend bool operator==(const message_count_method&, const message_count_method&) = default;
};

}  // namespace detail

/// queue.purge-ok (server → client): how many messages went away
/// (message_count).
using queue_purge_ok = detail::message_count_method<31, "queue.purge-ok">;

/// queue.delete (client → server).
struct queue_delete {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 50, method_id = 40;
    static constexpr std::string_view name = "queue.delete";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue to delete
    bool if_unused = false;  ///< only if it has no consumers
    bool if_empty = false;  ///< only if it has no messages
    bool no_wait = false;  ///< no delete-ok in reply

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = queue_delete;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<bit>("if-unused", &S::if_unused),
                          field<bit>("if-empty", &S::if_empty),
                          field<bit>("no-wait", &S::no_wait)};
    }
    /// Equal when every argument is.
    friend bool operator==(const queue_delete&, const queue_delete&) = default;
};

/// queue.delete-ok (server → client): how many messages went away
/// (message_count).
using queue_delete_ok = detail::message_count_method<41, "queue.delete-ok">;

/// queue.unbind (client → server). Unlike queue.bind it has no no-wait.
struct queue_unbind {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 50, method_id = 50;
    static constexpr std::string_view name = "queue.unbind";
    static constexpr bool has_content = false;
    ///@}
    std::uint16_t reserved_1 = 0;  ///< "ticket" in 0-8
    std::string queue{};  ///< the queue bound
    std::string exchange{};  ///< the exchange it is bound to
    std::string routing_key{};  ///< the binding key
    field_table arguments{};  ///< the binding arguments, as bound

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = queue_unbind;
        return std::tuple{field<short_>("reserved-1", &S::reserved_1),
                          field<shortstr>("queue", &S::queue),
                          field<shortstr>("exchange", &S::exchange),
                          field<shortstr>("routing-key", &S::routing_key),
                          field<table>("arguments", &S::arguments)};
    }
    /// Equal when every argument is.
    friend bool operator==(const queue_unbind&, const queue_unbind&) = default;
};

/// queue.unbind-ok (server → client).
using queue_unbind_ok = detail::method_without_arguments<50, 51, "queue.unbind-ok">;

}  // namespace tarry::amqp::wire
