// Reading a queue's control stream once, from its first entry up to now:
// what `tarry schedule list` and publisher::async_list_schedules need.
// Streams have no end-of-stream signal, so the reader appends a marker
// (control_stream.hpp) and reads up to it.
#pragma once

#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/message.hpp"

#include <boost/asio/async_result.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace tarry::control {

/// Called with each entry, in stream order, on the connection's executor
/// (markers are not passed on).
using entry_callback = std::function<void(const amqp::message&)>;

namespace detail {
void read_stream(amqp::connection& conn, std::string queue, entry_callback on_entry,
                 std::chrono::milliseconds timeout, amqp::detail::op_handler<> h);
}

/// Reads `queue`'s control stream from its first entry up to a marker it
/// appends, on a channel of its own (closed after) → void(std::error_code).
/// Errors: 404 NOT_FOUND (amqp::broker_category()) when the stream does not
/// exist (no command was ever written: nothing to read); std::errc::timed_out
/// when the marker is not read back within `timeout`; the channel's or
/// connection's failure. Entries read before a failure were passed on.
/// Any thread; `conn` must outlive the operation; `on_entry` is not called
/// after completion.
template <class Token>
auto async_read_stream(amqp::connection& conn, std::string queue, entry_callback on_entry,
                       std::chrono::milliseconds timeout, amqp::diagnostics& diag, Token&& token) {
    auto with_diag = amqp::detail::with_diagnostics(diag, std::forward<Token>(token));
    return boost::asio::async_initiate<decltype(with_diag), void(std::error_code)>(
        [&conn](amqp::detail::op_handler<> h, std::string q, entry_callback e, std::chrono::milliseconds t) {
            detail::read_stream(conn, std::move(q), std::move(e), t, std::move(h));
        },
        with_diag, std::move(queue), std::move(on_entry), timeout);
}

}  // namespace tarry::control
