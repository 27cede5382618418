// The connection's life as a sans-I/O state machine: when to make an
// attempt and to which broker address, when to wait and reconnect, when it
// is over, which hooks hear of it and how the waiters of async_connect and
// async_close complete.
//
// Its driver (connection_impl) feeds it inputs (lifecycle_types.hpp) and
// does the actions each one returns, in order. It owns the reconnect
// policy, the random source of its jitter and the time of the loss; time
// comes in with the inputs. Single-threaded, no I/O.
//
// What each input does, by state (anything not listed changes nothing;
// the connect and close waiters not mentioned wait):
//   idle, closed  connect: start_attempt (the first address) -> connecting.
//                 close: completes at once.
//   connecting    opened -> open. ended: start_attempt (the next address) at
//                 once; after the last address, a failed connect, never
//                 retried -> closed. close: close_session -> aborting.
//   open          connect: completes at once. close: close_session -> closing.
//                 ended: lost, on_lost, then -> waiting_to_reconnect, or -> closed
//                 when reconnect is off or the policy gives up.
//   waiting_to_reconnect
//                 timer: start_attempt (the next address) -> reconnecting.
//                 close: the timer is cancelled -> closed.
//   reconnecting  opened -> open. ended: -> waiting_to_reconnect; refused with
//                 an address untried in this round: start_attempt (the next
//                 address) at once; or -> closed when the policy gives up.
//                 close: close_session -> aborting.
//   closing       connect: completes at once. ended: the close is done -> closed.
//   aborting      ended: the close is done -> closed; opened is ignored.
//
// Addresses are indexes into config.addresses() (host:port, then failover).
//
// Promises:
// - The caller's connect tries each address once, in order, each failure
//   moving on at once; when the last fails, its failure (saying how many
//   addresses were tried, when more than one) closes the connection (no
//   reconnect). A loss of an open connection reconnects (when
//   config.reconnect), after the policy's pause: refused_interval after a
//   refused TCP connect, the growing backoff after anything else; the
//   attempt number reported starts at 1 after each loss.
// - Each reconnect attempt goes to the address after the previous
//   attempt's (after the lost connection's, first): round-robin. A round is
//   the attempts made one after another without a pause; a refused attempt
//   moves on to the next address at once (on_reconnect_scheduled with a 0
//   pause, no timer) while the round has not tried every address; the
//   policy's limits still count it and may end the connection.
// - An attempt that opens resets the policy; so does a new connect.
// - A close completes its waiters, then fails the connect waiters, calls
//   on_closed once and releases the hooks; during an attempt, the attempt
//   is abandoned and what it yields is not counted nor retried.
// - start_attempt and close_session come last in their list.
// - Inputs that do not apply to the state (a late timer, an end without a
//   session) change nothing and ask for nothing.
#pragma once

#include "lifecycle_types.hpp"
#include "reconnect_policy.hpp"

#include "tarry/amqp/connection_config.hpp"
#include "tarry/retry/backoff.hpp"

#include <cstddef>

namespace tarry::amqp::detail {

class connection_lifecycle {
public:
    /// Uses config.reconnect, reconnect_backoff, refused_reconnect_interval
    /// and the number of config.addresses().
    connection_lifecycle(const connection_config& config, retry::random_source random);

    /// Takes one input; returns what the driver must do, in order.
    life::actions on(life::any_input in);

    life::state state() const noexcept { return state_; }
    /// Open, or closing after being open: async_connect completes at once
    /// and async_wait_unblocked waits on the connection.
    bool connection_up() const noexcept {
        return state_ == life::state::open || state_ == life::state::closing;
    }

private:
    void on_input(const life::input::connect_requested&, life::actions& out);
    void on_input(const life::input::close_requested&, life::actions& out);
    void on_input(const life::input::opened&, life::actions& out);
    void on_input(life::input::ended& in, life::actions& out);
    void on_input(const life::input::timer_fired&, life::actions& out);

    /// After failure `f` (`elapsed` since the loss): waits and reconnects,
    /// or gives up when the policy says so.
    void reconnect_after(diagnostics why, attempt_failure f, retry::duration elapsed,
                         life::actions& out);
    /// Starts an attempt to `address`, the `tried`-th of its round.
    void start(std::size_t address, std::size_t tried, life::actions& out);
    std::size_t next_address() const noexcept { return (address_ + 1) % addresses_; }
    /// Over for good: fails the connect waiters with `why` (its code, or
    /// connection_closed when it has none), on_closed.
    void finish(const diagnostics& why, life::actions& out);
    /// The caller's close is done: its waiters, then finish, then the hooks go.
    void close_done(const diagnostics& why, life::actions& out);

    bool reconnect_;
    reconnect_policy policy_;
    retry::random_source random_;
    std::size_t addresses_;  // how many (at least 1)
    life::state state_ = life::state::idle;
    std::size_t address_ = 0;  // of the current or last attempt
    std::size_t tried_ = 0;    // attempts in this round: since the connect or the last pause
    std::chrono::steady_clock::time_point lost_at_{};
};

}  // namespace tarry::amqp::detail
