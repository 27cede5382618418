// The consumer's connections and subscription as typed events, for logs
// and health checks (consumer_hooks::on_connection_event).
#pragma once

#include <chrono>
#include <string>

namespace tarry {

/// A change in the state of the consumer's connections or subscription.
struct connection_event {
    /// What happened.
    enum class kind {
        connected,           ///< a connection is open (again)
        consuming,           ///< subscribed: deliveries flow (again)
        lost,                ///< a connection was lost (`detail` says how)
        reconnecting,        ///< the next attempt comes in `delay` (`attempt` from 1)
        blocked,             ///< the broker blocks the connection (a resource alarm; `detail`)
        unblocked,           ///< ... and no longer
        closed,              ///< a connection is closed for good (`detail` when it failed)
        subscribe_failed,    ///< declaring the queues or consuming failed; tried again later
        lane_change_failed,  ///< a hand-over to another lane failed; the old lane goes on
        control_attached,    ///< the queue's control stream is read up to its end: cancels apply (`detail`: the checkpoint it began from, if any)
        control_failed,      ///< reading the control stream failed (`detail`); tried again, consuming goes on
        consumer_cancelled,  ///< the broker cancelled a lane's consumer (its queue deleted; RabbitMQ 4.3's
                             ///< consumer timeout): the lane keeps its jobs; another consumes in `delay`
    };
    kind what = kind::connected;  ///< what happened
    bool copies = false;  ///< about the connection that publishes the copies
    std::string detail;   ///< what happened, for a person (may be empty)
    /// reconnecting, subscribe_failed, consumer_cancelled: how long until the next try
    std::chrono::milliseconds delay{0};
    unsigned attempt = 0;                ///< reconnecting: the attempt's number, from 1

    /// One line for logs, e.g. "copies connection lost: connection reset".
    std::string text() const;
};

/// "connected", "lost", ... as used in logs.
const char* to_string(connection_event::kind k) noexcept;

}  // namespace tarry
