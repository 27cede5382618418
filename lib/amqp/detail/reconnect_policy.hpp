// Which pause comes before the next reconnect attempt, after which failure.
//
// A plain value with no clock and no I/O: connection_lifecycle tells it
// each failure in a row, with the time since the connection was
// lost and its random source, and resets it when an attempt succeeds.
//
// Promises:
// - After an attempt whose TCP connect was refused (nothing listens: the
//   broker is stopped or restarting), the pause is `refused_interval`,
//   every time: a broker that listens again is found within that interval.
// - After any other failure (the loss of an open connection, a resolve
//   error, a timeout, a TLS or AMQP handshake that fails, a close by the
//   broker), the pause is the configured backoff for the n-th such failure
//   in a row. Refused attempts in between do not make it grow.
// - The backoff's limits (max_attempts, max_total) count every failure in a
//   row, refused or not: a broker that stays away is given up on as
//   configured.
// - With several broker addresses, a refused attempt while an address has
//   not been tried since the last pause moves on to it at once: no pause,
//   counted towards the limits but not the backoff. The refused interval
//   comes once every address was refused in a row.
// - reset() (a successful connect) starts both counts again.
// - refused_interval 0: a refused connect is like any other failure (it
//   never moves on at once either).
#pragma once

#include "tarry/retry/backoff.hpp"

#include <string>

namespace tarry::amqp::detail {

/// How a reconnect attempt failed, as far as the pause after it goes.
enum class attempt_failure {
    refused,  ///< the TCP connect was refused (ECONNREFUSED)
    other,    ///< anything else, the loss of an open connection included
};

/// What comes before the next reconnect attempt.
struct reconnect_decision {
    bool retry = false;      ///< false: a limit is reached (`reason` says which)
    bool at_once = false;    ///< on to the next address now: no pause, no timer
    retry::duration delay{0};  ///< the pause (0 when at_once or !retry)
    std::string reason;
};

class reconnect_policy {
public:
    reconnect_policy(retry::backoff_policy backoff, retry::duration refused_interval);

    /// Counts failure `f` and decides: retry at once or after `delay`, or
    /// give up (`reason` says which limit). `elapsed` is the time since the
    /// connection was lost; `untried_address`: an address has not been
    /// tried since the last pause.
    reconnect_decision after(attempt_failure f, retry::duration elapsed,
                             retry::random_source& random, bool untried_address = false);

    /// An attempt succeeded: the next failure is the first again.
    void reset() noexcept;

    /// Failures in a row so far, of every kind (the attempt number reported
    /// to on_reconnect_scheduled).
    unsigned failures() const noexcept { return failures_; }

private:
    retry::backoff_policy backoff_;
    retry::duration refused_interval_;
    unsigned failures_ = 0;          // every failure in a row
    unsigned backoff_failures_ = 0;  // of those, the ones the backoff counts
    retry::duration previous_{0};    // the backoff's last pause (decorrelated jitter)
};

}  // namespace tarry::amqp::detail
