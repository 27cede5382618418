// The queue's control stream: a RabbitMQ stream beside a work queue,
// `<queue>.tarry.control`, holding what commands say about the queue's jobs
// (tombstones: tarry/control/tombstone.hpp), read by every consumer of the
// queue. See docs/control.md.
//
// Declaring: the first command that needs the stream declares it, always
// with the one argument set below (RabbitMQ refuses a redeclare with other
// arguments: 406 PRECONDITION_FAILED); everyone else declares it passively.
// Pure values and one asynchronous operation, async_declare_stream.
#pragma once

#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/message.hpp"
#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/control/tombstone.hpp"

#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace tarry::control {

/// `<queue>.tarry.control`. A queue name of up to 241 bytes keeps it within
/// AMQP's 255.
std::string stream_name(std::string_view queue);

/// Its segment size, x-stream-max-segment-size-bytes: small, because
/// RabbitMQ 3.10 applies x-max-age only when a segment rolls over.
inline constexpr std::int64_t stream_segment_bytes = 1'000'000;

/// The `type` property of a marker: an entry a reader appends and then
/// reads back, to know it has read everything before it (streams have no
/// end-of-stream signal). Its message_id is the reader's own; other readers
/// skip it.
inline constexpr std::string_view marker_type = "tarry.marker";
/// A marker entry with `id` (transient, empty body).
amqp::message marker_message(std::string id);
/// Whether `p` is a marker's (any reader's): no entry to act on.
bool is_marker(const amqp::basic_properties& p) noexcept;

/// The one catch-up of every reader of a control stream: read from the
/// first entry up to a marker of its own, appended once consuming. Pure
/// (the reader does the I/O): append marker(), then pass each delivery's
/// properties to is_end() until it says the marker is back. A fresh id
/// each (the prefix, then 128 random bits), so two readers never take each
/// other's marker for their own. Any thread; a value.
class stream_end {
public:
    /// A new end to read up to; `prefix` names the kind of reader in the
    /// id ("list", "marker").
    explicit stream_end(std::string_view prefix);
    /// The marker to append.
    amqp::message marker() const;
    /// True when `p` is this end's marker: everything appended before it
    /// has been read.
    bool is_end(const amqp::basic_properties& p) const noexcept { return is_marker(p) && p.message_id == id_; }
    /// The marker's id.
    const std::string& id() const noexcept { return id_; }

private:
    std::string id_;
};

/// The arguments of every active declare: x-queue-type "stream", x-max-age
/// "7D" (stream_max_age), x-stream-max-segment-size-bytes. The stream is durable.
amqp::wire::field_table stream_arguments();

namespace detail {
void declare_stream(amqp::connection& conn, std::string queue, bool passive, amqp::detail::op_handler<> h);
}

/// Declares `queue`'s control stream on a channel of its own (opened for it,
/// closed after) → void(std::error_code). Active: with the arguments above;
/// 406 PRECONDITION_FAILED (amqp::broker_category()) when it exists with
/// other ones. `passive`: only checks that it exists; 404 NOT_FOUND when it
/// does not. not_connected while `conn` is down. Any thread; the
/// connection must stay alive until it completes.
template <class Token>
auto async_declare_stream(amqp::connection& conn, std::string queue, bool passive, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code)>(
        [&conn](amqp::detail::op_handler<> h, std::string q, bool p) {
            detail::declare_stream(conn, std::move(q), p, std::move(h));
        },
        token, std::move(queue), passive);
}
/// The same, with this operation's diagnostics in `diag` (the broker's
/// words for a 404 or 406).
template <class Token>
auto async_declare_stream(amqp::connection& conn, std::string queue, bool passive, amqp::diagnostics& diag,
                          Token&& token) {
    return async_declare_stream(conn, std::move(queue), passive,
                                amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
}

}  // namespace tarry::control
