// Putting a delay cascade (delay_cascade.hpp) on the broker, and finding
// what was put there.
//
// - async_declare declares what a cascade_topology lists, in order, on one
//   channel, and stops at the first failure (a redeclare with other
//   arguments: the broker's 406, which closes the channel).
// - async_declare_cascade declares the whole cascade and then replaces its
//   descriptor (the one message of `<prefix>.topology`), published
//   persistent and confirmed: it puts the channel in confirm mode.
//   Declaring is idempotent: the same spec again changes nothing.
// - async_read_description reads that message with basic.get and gives it
//   back (nack, requeue), so every reader sees it: the spec of the cascade
//   declared under `prefix`. Another reader holding it for a moment is
//   waited for (up to 1 s). Fails with std::errc::no_message_available when
//   the descriptor queue is empty (a topology imported from definitions
//   carries no messages: declare it once more to write one), with the
//   broker's 404 when it does not exist, or with
//   amqp::errc::invalid_argument when the message describes no cascade.
// Each completes on its handler's associated executor (default: `ex`,
// which must be the channel's connection's); each has a `diagnostics&`
// overload saying which step failed and the broker's words.
#pragma once

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/parking/delay_cascade.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

namespace tarry::parking {

namespace detail {
using declared_handler = amqp::detail::op_handler<>;
using description_handler = amqp::detail::op_handler<cascade_spec>;
void declare_topology(boost::asio::any_io_executor ex, amqp::channel ch, cascade_topology t, declared_handler h);
void declare_cascade(boost::asio::any_io_executor ex, amqp::channel ch, delay_cascade c, declared_handler h);
void read_description(boost::asio::any_io_executor ex, amqp::channel ch, std::string prefix,
                      description_handler h);
}  // namespace detail

/// Declares `t` on `ch` → void(std::error_code).
template <class Token>
auto async_declare(boost::asio::any_io_executor ex, const amqp::channel& ch, cascade_topology t, Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code)>(
        [](detail::declared_handler h, boost::asio::any_io_executor e, amqp::channel c, cascade_topology top) {
            detail::declare_topology(std::move(e), std::move(c), std::move(top), std::move(h));
        },
        token, std::move(ex), ch, std::move(t));
}
/// The same, with this operation's diagnostics in `diag`.
template <class Token>
auto async_declare(boost::asio::any_io_executor ex, const amqp::channel& ch, cascade_topology t,
                   amqp::diagnostics& diag, Token&& token) {
    return async_declare(std::move(ex), ch, std::move(t), amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
}

/// Declares `c` on `ch` and replaces its descriptor → void(std::error_code).
template <class Token>
auto async_declare_cascade(boost::asio::any_io_executor ex, const amqp::channel& ch, delay_cascade c,
                           Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code)>(
        [](detail::declared_handler h, boost::asio::any_io_executor e, amqp::channel chan, delay_cascade cas) {
            detail::declare_cascade(std::move(e), std::move(chan), std::move(cas), std::move(h));
        },
        token, std::move(ex), ch, std::move(c));
}
/// The same, with this operation's diagnostics in `diag`.
template <class Token>
auto async_declare_cascade(boost::asio::any_io_executor ex, const amqp::channel& ch, delay_cascade c,
                           amqp::diagnostics& diag, Token&& token) {
    return async_declare_cascade(std::move(ex), ch, std::move(c),
                                 amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
}

/// The spec of the cascade declared under `prefix` → void(std::error_code,
/// cascade_spec).
template <class Token>
auto async_read_description(boost::asio::any_io_executor ex, const amqp::channel& ch, std::string prefix,
                            Token&& token) {
    return boost::asio::async_initiate<Token, void(std::error_code, cascade_spec)>(
        [](detail::description_handler h, boost::asio::any_io_executor e, amqp::channel c, std::string p) {
            detail::read_description(std::move(e), std::move(c), std::move(p), std::move(h));
        },
        token, std::move(ex), ch, std::move(prefix));
}
/// The same, with this operation's diagnostics in `diag`.
template <class Token>
auto async_read_description(boost::asio::any_io_executor ex, const amqp::channel& ch, std::string prefix,
                            amqp::diagnostics& diag, Token&& token) {
    return async_read_description(std::move(ex), ch, std::move(prefix),
                                  amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
}

}  // namespace tarry::parking
