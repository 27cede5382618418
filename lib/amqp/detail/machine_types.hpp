// The vocabulary of the sans-I/O connection machine: operation ids, time,
// negotiated limits, and the events it yields to its driver.
#pragma once

#include "tarry/amqp/connection_config.hpp"
#include "tarry/amqp/error.hpp"
#include "tarry/amqp/wire/content_assembler.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/methods.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace tarry::amqp::detail {

using time_point = std::chrono::steady_clock::time_point;
using milliseconds = std::chrono::milliseconds;

/// Names an operation the driver is waiting on. The driver picks them
/// (unique per machine); 0 means "nobody waits for this".
using op_id = std::uint64_t;

/// A channel as requests name it: its number and the serial the machine
/// gave it when it was opened, so a stale handle never reaches a new
/// channel that reuses the number.
struct channel_ref {
    std::uint16_t number = 0;
    std::uint64_t serial = 0;
    friend bool operator==(const channel_ref&, const channel_ref&) = default;
};

/// Limits settled by connection.tune / tune-ok.
struct negotiated_limits {
    std::uint16_t channel_max = 0;
    std::uint32_t frame_max = 0;
    std::uint16_t heartbeat = 0;  ///< seconds; 0 = off
    friend bool operator==(const negotiated_limits&, const negotiated_limits&) = default;
};

/// What the machine needs from connection_config: a subset, with the same
/// defaults (taken from it), so unit tests build it directly.
struct machine_config {
    machine_config() : machine_config(connection_config{}) {}
    explicit machine_config(const connection_config& c)
        : username(c.username),
          password(c.password),
          vhost(c.vhost),
          heartbeat(c.heartbeat),
          frame_max(c.frame_max),
          channel_max(c.channel_max),
          close_timeout(c.close_timeout),
          connection_name(c.connection_name),
          max_body_size(c.max_body_size) {}

    std::string username;
    std::string password;
    std::string vhost;
    std::uint16_t heartbeat;
    std::uint32_t frame_max;
    std::uint16_t channel_max;
    milliseconds close_timeout;
    std::string connection_name;
    std::uint64_t max_body_size;
};

// ---- events -------------------------------------------------------------

/// An operation finished. For RPCs `reply` is the broker's answer (and
/// `content` the message of a basic.get-ok); for channel.open `channel` is
/// the new channel. A failure is `ec` and `detail`, and `closed_by` when
/// the broker closed the operation's channel or the connection while the
/// operation was pending: each channel (each incarnation of a number) and
/// each connection closes once, so that close is the one that ended this
/// operation. An operation refused because its channel was already closed
/// has no `closed_by`.
struct ev_op_done {
    op_id id = 0;
    std::error_code ec;
    std::string detail;
    std::optional<broker_reply> closed_by;
    channel_ref channel;
    std::optional<wire::method> reply;
    std::optional<wire::message_content> content;
};

/// The handshake finished; the connection is open.
struct ev_connection_open {
    negotiated_limits limits;
    wire::field_table server_properties;
};

/// The connection is over (this machine is finished). `ec` says why;
/// connection_closed when the client closed it cleanly.
struct ev_connection_closed {
    std::error_code ec;
    std::string detail;
    std::optional<broker_reply> reply;
};

/// A channel is gone (closed by the broker, by us, or with the connection).
struct ev_channel_closed {
    channel_ref channel;
    std::error_code ec;
    std::string detail;
    std::optional<broker_reply> reply;
};

/// A consumer's message; content.unreadable is set when it could not be
/// read (the consumer settles it like any other).
struct ev_delivery {
    channel_ref channel;
    op_id consumer = 0;
    wire::basic_deliver method;
    wire::message_content content;
};

/// A consumer is gone: cancelled by us (ec empty), by the broker
/// (consumer_cancelled), or with its channel / connection.
struct ev_consumer_ended {
    channel_ref channel;
    op_id consumer = 0;
    std::string consumer_tag;
    std::error_code ec;
};

/// An unroutable mandatory message came back.
struct ev_return {
    channel_ref channel;
    wire::basic_return method;
    wire::message_content content;
};

/// connection.blocked (blocked = true, with reason) or unblocked.
struct ev_blocked {
    bool blocked = false;
    std::string reason;
};

/// The broker sent channel.flow (already answered with flow-ok).
struct ev_flow {
    channel_ref channel;
    bool active = true;
};

using event = std::variant<ev_op_done, ev_connection_open, ev_connection_closed,
                           ev_channel_closed, ev_delivery, ev_consumer_ended, ev_return,
                           ev_blocked, ev_flow>;

}  // namespace tarry::amqp::detail
