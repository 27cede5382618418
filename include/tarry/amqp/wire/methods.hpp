// AMQP 0-9-1 methods as RabbitMQ speaks them, and their codec.
//
// A method frame's payload is class-id (u16), method-id (u16) and the
// method's arguments. Each method is a plain struct (methods/<class>.hpp);
// `method` is the variant of all of them. encode_method and decode_method
// are one generic walk over each struct's fields(), so every method is
// encoded the same way and checked against the spec XML by a test.
//
// Pure functions over bytes: no I/O, no clocks, no global state; safe to
// call from any thread on distinct arguments. Never throw on bad input
// (only std::bad_alloc can escape).
#pragma once

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/method_field.hpp"
#include "tarry/amqp/wire/methods/basic.hpp"
#include "tarry/amqp/wire/methods/channel.hpp"
#include "tarry/amqp/wire/methods/confirm.hpp"
#include "tarry/amqp/wire/methods/connection.hpp"
#include "tarry/amqp/wire/methods/exchange.hpp"
#include "tarry/amqp/wire/methods/queue.hpp"
#include "tarry/amqp/wire/methods/tx.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>

namespace tarry::amqp::wire {

/// Every method tarry can encode and decode, ordered by (class_id, method_id).
using method = std::variant<
    connection_start, connection_start_ok, connection_secure, connection_secure_ok,
    connection_tune, connection_tune_ok, connection_open, connection_open_ok, connection_close,
    connection_close_ok, connection_blocked, connection_unblocked, connection_update_secret,
    connection_update_secret_ok,
    channel_open, channel_open_ok, channel_flow, channel_flow_ok, channel_close, channel_close_ok,
    exchange_declare, exchange_declare_ok, exchange_delete, exchange_delete_ok, exchange_bind,
    exchange_bind_ok, exchange_unbind, exchange_unbind_ok,
    queue_declare, queue_declare_ok, queue_bind, queue_bind_ok, queue_purge, queue_purge_ok,
    queue_delete, queue_delete_ok, queue_unbind, queue_unbind_ok,
    basic_qos, basic_qos_ok, basic_consume, basic_consume_ok, basic_cancel, basic_cancel_ok,
    basic_publish, basic_return, basic_deliver, basic_get, basic_get_ok, basic_get_empty,
    basic_ack, basic_reject, basic_recover_async, basic_recover, basic_recover_ok, basic_nack,
    confirm_select, confirm_select_ok,
    tx_select, tx_select_ok, tx_commit, tx_commit_ok, tx_rollback, tx_rollback_ok>;

/// One argument of a method: its spec name (e.g. "routing-key") and wire type.
struct argument_info {
    std::string_view name;  ///< the spec's name, "routing-key"
    wire_type type;  ///< its wire type
};

/// A method as the codec knows it: ids, spec name ("queue.declare"),
/// whether content follows it, and its arguments in wire order.
struct method_info {
    std::uint16_t class_id;  ///< its class id (60 for basic)
    std::uint16_t method_id;  ///< its method id within the class
    std::string_view name;  ///< the spec's name, "queue.declare"
    bool has_content;  ///< content (header and body frames) follows it
    std::span<const argument_info> arguments;  ///< its arguments in wire order (static data)
};

/// Every method of `method`, in the variant's order (so catalog[i] describes
/// alternative i), which is ascending (class_id, method_id). Static data.
std::span<const method_info> method_catalog() noexcept;

/// The method with these ids, or nullptr if tarry does not know it. Useful
/// to name the failing method of a connection.close / channel.close.
const method_info* find_method(std::uint16_t class_id, std::uint16_t method_id) noexcept;

/// The catalog entry of the method m holds.
const method_info& info_of(const method& m) noexcept;

/// The spec name of the method m holds, e.g. "basic.deliver".
std::string_view method_name(const method& m) noexcept;

/// Appends a method frame's payload: class-id, method-id, arguments. A value
/// that cannot be encoded (a shortstr over 255 bytes, a table name over 255
/// bytes) fails the writer with errc::string_too_long and a detail naming
/// the method and argument; the caller checks w.ok() and discards the
/// output on failure.
void encode_method(byte_writer& w, const method& m);

/// Decodes a method frame's payload into `out`. Errors:
///   truncated       the payload ends before the ids or an argument does
///   unknown_method  ids tarry does not know (detail "class 60 method 99")
///   trailing_bytes  bytes are left after the last argument
///   bad_field_type, table_too_deep, table_too_large  from a field table
/// On failure `detail` (if given) gets a one-line explanation naming the
/// method and argument, and `out` holds a partly decoded value to discard.
/// On success `detail` is left alone. Unused bits of a bit octet are ignored.
std::error_code decode_method(std::span<const std::uint8_t> payload, method& out,
                              std::string* detail = nullptr,
                              const table_limits& limits = {});

}  // namespace tarry::amqp::wire
