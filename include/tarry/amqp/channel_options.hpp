// The arguments and results of channel operations (see channel.hpp).
//
// Plain values: copy them, build them on any thread. Names are shortstr on
// the wire: over 255 bytes the operation fails with errc::invalid_argument
// before anything is sent.
#pragma once

#include "tarry/amqp/error.hpp"
#include "tarry/amqp/message.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace tarry::amqp {

/// exchange.declare. A redeclare with other settings fails the channel (406).
struct exchange_options {
    std::string name;             ///< the exchange's name
    std::string type = "direct";  ///< direct, fanout, topic, headers, or a plugin's
    bool passive = false;         ///< only check that it exists (404 if not)
    bool durable = false;         ///< survives a broker restart
    bool auto_delete = false;     ///< deleted when its last binding goes
    bool internal = false;        ///< not publishable by clients, only bindable
    field_table arguments;        ///< e.g. alternate-exchange
};

/// exchange.delete conditions. By default it is deleted, bound or not.
struct exchange_delete_options {
    bool if_unused = false;  ///< fail (406) if a queue or exchange is bound to it
};

/// queue.declare. An empty name asks the broker for one (see queue_info).
struct queue_options {
    std::string name;        ///< the queue's name; empty: the broker makes one up
    bool passive = false;    ///< only check that it exists (404 if not)
    bool durable = false;    ///< survives a broker restart
    bool exclusive = false;  ///< this connection only; deleted with it
    bool auto_delete = false;  ///< deleted when its last consumer goes
    field_table arguments;   ///< x-queue-type, x-message-ttl, x-max-length, ...
};

/// The answer to queue.declare.
struct queue_info {
    std::string name;                 ///< as the broker named it
    std::uint32_t message_count = 0;  ///< ready messages
    std::uint32_t consumer_count = 0;  ///< its consumers
};

/// queue.delete conditions.
struct queue_delete_options {
    bool if_unused = false;  ///< fail (406) if it has consumers
    bool if_empty = false;   ///< fail (406) if it has messages
};

/// basic.qos. RabbitMQ: prefetch_size must be 0; global=false applies the
/// count to each consumer started afterwards on the channel.
struct qos_options {
    std::uint16_t prefetch_count = 0;  ///< unacknowledged deliveries; 0 = unlimited
    std::uint32_t prefetch_size = 0;   ///< unacknowledged bytes; RabbitMQ takes only 0
    bool global = false;               ///< true: one count shared by the channel's consumers
};

/// basic.consume.
struct consume_options {
    std::string queue;         ///< the queue to consume from
    std::string consumer_tag;  ///< empty: the broker makes one up
    bool no_local = false;     ///< not this connection's publishes (RabbitMQ ignores it)
    bool no_ack = false;       ///< deliveries count as acknowledged when sent
    bool exclusive = false;    ///< the queue's only consumer (403 if it has another)
    field_table arguments;     ///< e.g. x-priority
};

/// basic.get. By default the message awaits an ack, like a delivery.
struct get_options {
    bool no_ack = false;  ///< the message counts as acknowledged when sent
};

/// basic.ack. By default of the one delivery.
struct ack_options {
    bool multiple = false;  ///< also every unacknowledged tag before this one
};

/// basic.nack. The defaults give one message back to its queue.
struct nack_options {
    bool multiple = false;  ///< also every unacknowledged tag before this one
    bool requeue = true;    ///< back to its queue; false dead-letters (or drops) it
};

/// basic.reject. The default gives the message back to its queue.
struct reject_options {
    bool requeue = true;  ///< back to its queue; false dead-letters (or drops) it
};

/// basic.recover. By default every unacknowledged delivery goes back to its queue.
struct recover_options {
    bool requeue = true;  ///< back to the queue, for any consumer; false: to the same consumer
};

/// Where a consumer's messages go. Both are called on the connection's I/O
/// thread, in order, never concurrently; they must not block (hand long work
/// to other threads and ack from there).
struct consumer_handlers {
    /// Each delivery. Required. A delivery whose content could not be read
    /// arrives too, with delivery::unreadable set, so it can be settled
    /// (e.g. dead-lettered): a poison message never costs the connection.
    std::function<void(delivery)> on_delivery;
    /// The consumer ended without our async_cancel: the broker cancelled it
    /// (errc::consumer_cancelled, as when its queue was deleted), or its
    /// channel or connection closed (that error). Unacknowledged deliveries
    /// of a closed channel are redelivered by the broker. Optional.
    std::function<void(std::error_code)> on_cancelled;
};

/// basic.publish flags.
struct publish_options {
    /// Ask for a basic.return (see channel::set_return_handler) when no
    /// queue takes the message.
    bool mandatory = false;
};

}  // namespace tarry::amqp
