// The vocabulary of the connection's life (connection_lifecycle.hpp): its
// states, the inputs its driver feeds it and the actions it answers with.
// Plain values: no Asio, no handlers, no clock (times come in as values).
#pragma once

#include "tarry/amqp/error.hpp"

#include <chrono>
#include <cstddef>
#include <system_error>
#include <variant>
#include <vector>

namespace tarry::amqp::detail::life {

enum class state {
    idle,                  ///< never asked to connect
    connecting,            ///< the caller's connect: an attempt under way; a failed one is
                           ///< followed by the next address, never retried
    open,                  ///< an attempt succeeded
    waiting_to_reconnect,  ///< lost, or a reconnect attempt failed: the reconnect timer runs
    reconnecting,          ///< an attempt after a loss under way
    closing,               ///< close requested on an open connection: connection.close under way
    aborting,              ///< close requested during an attempt: the attempt is being abandoned
    closed,                ///< over for good: closed by the caller, first connect failed,
                           ///< reconnect off, or its policy gave up
};

const char* to_string(state s) noexcept;

// ---- inputs: what happened --------------------------------------------------

namespace input {

/// async_connect (its waiter is already queued by the driver).
struct connect_requested {};
/// async_close or the owner's shutdown (its waiter, if any, already queued).
struct close_requested {};
/// The current attempt's handshake finished: the connection is open.
struct opened {};
/// The current attempt or connection is over: while connecting it failed,
/// while open it was lost, while closing or aborting the close is done.
struct ended {
    diagnostics why;
    bool refused = false;  ///< the attempt's TCP connect was refused (nothing listens)
    std::chrono::steady_clock::time_point now{};
};
/// The reconnect timer fired.
struct timer_fired {};

}  // namespace input

using any_input = std::variant<input::connect_requested, input::close_requested, input::opened,
                               input::ended, input::timer_fired>;

// ---- actions: what the driver must do, in order -------------------------------

namespace action {

/// Starts an attempt: resolve, TCP, TLS, AMQP handshake (a new session),
/// to `address`, an index into connection_config::addresses().
/// Always the last action of its list: the attempt may end at once, and
/// the driver may feed that end from inside this action.
struct start_attempt {
    std::size_t address = 0;
};
/// Ends the current session: abandons its attempt, or sends
/// connection.close on it. Always last, for the same reason.
struct close_session {};
/// Arms the reconnect timer; timer_fired when it expires.
struct arm_timer {
    std::chrono::milliseconds delay{0};
};
struct cancel_timer {};
/// Completes every queued async_connect with `why` (success when its code
/// is empty): the attempt's or the connection's end, as it was fed in.
struct complete_connects {
    diagnostics why;
};
/// Completes every queued async_close, with success.
struct complete_closes {};
/// usage().failed_attempts, connections_lost.
struct count_failed_attempt {};
struct count_lost {};
/// last_error() = diag.
struct set_last_error {
    diagnostics diag;
};
/// Calls the hook of that name.
struct call_on_open {};
struct call_on_lost {
    diagnostics diag;
};
struct call_on_reconnect_scheduled {
    unsigned attempt = 0;  ///< from 1
    std::chrono::milliseconds delay{0};
    diagnostics diag;
};
struct call_on_closed {
    diagnostics diag;
};
/// Drops the hooks: nothing will call them again (the caller closed).
struct release_hooks {};

}  // namespace action

using any_action =
    std::variant<action::start_attempt, action::close_session, action::arm_timer,
                 action::cancel_timer, action::complete_connects, action::complete_closes,
                 action::count_failed_attempt, action::count_lost, action::set_last_error,
                 action::call_on_open, action::call_on_lost, action::call_on_reconnect_scheduled,
                 action::call_on_closed, action::release_hooks>;
using actions = std::vector<any_action>;

}  // namespace tarry::amqp::detail::life
