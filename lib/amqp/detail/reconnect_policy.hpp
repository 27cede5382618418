// Which pause comes before the next reconnect attempt, after which failure.
//
// A plain value with no clock and no I/O: the driver (connection_impl)
// tells it each failure in a row, with the time since the connection was
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
// - reset() (a successful connect) starts both counts again.
// - refused_interval 0: a refused connect is like any other failure.
#pragma once

#include "tarry/retry/backoff.hpp"

namespace tarry::amqp::detail {

/// How a reconnect attempt failed, as far as the pause after it goes.
enum class attempt_failure {
    refused,  ///< the TCP connect was refused (ECONNREFUSED)
    other,    ///< anything else, the loss of an open connection included
};

class reconnect_policy {
public:
    reconnect_policy(retry::backoff_policy backoff, retry::duration refused_interval);

    /// Counts failure `f` and decides: retry after `delay`, or give up
    /// (`reason` says which limit). `elapsed` is the time since the
    /// connection was lost.
    retry::retry_decision after(attempt_failure f, retry::duration elapsed,
                                retry::random_source& random);

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
