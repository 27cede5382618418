// The publishes a publisher has sent and the broker has not yet confirmed,
// in the order sent, each with its caller's handler: the rule that matches a
// basic.return to one of them (see "Returns" in
// tarry/publisher/publisher.hpp), and the confirm deadline (a channel whose
// oldest publish waited past publisher_options::confirm_timeout is given
// up). Time is passed in: no clock, no I/O.
// Not thread-safe: the publisher's strand owns it.
#pragma once

#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/error.hpp"
#include "tarry/amqp/message.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace tarry::detail {

class in_flight {
public:
    using done_handler = amqp::detail::op_handler<>;
    using time_point = std::chrono::steady_clock::time_point;

    /// Records a publish sent at `sent` on the publisher's channel number
    /// `channel` (its own count of channels opened), with the handler its
    /// outcome goes to; returns the publish's id.
    std::uint64_t add(std::uint64_t channel, std::string_view exchange, std::string_view routing_key,
                      const amqp::message& msg, done_handler done, time_point sent);

    /// A basic.return came back on `channel`: marks the earliest publish
    /// sent there with the same exchange, routing key, message_id and body
    /// that no earlier return marked, with `why` (what to tell its caller).
    /// False when none matches.
    bool match_return(std::uint64_t channel, std::string_view exchange, std::string_view routing_key,
                      const amqp::message& msg, amqp::diagnostics why);

    /// A landed publish: its handler, and the `why` of the return matched
    /// to it, if any.
    struct landed {
        done_handler done;
        std::optional<amqp::diagnostics> returned;
    };
    /// Forgets publish `id` (its confirm or failure arrived) and hands back
    /// its handler. Nothing when it is not here (given up on before).
    std::optional<landed> land(std::uint64_t id);

    /// When the oldest publish here will have waited `timeout`; nothing
    /// when none waits.
    std::optional<time_point> next_deadline(std::chrono::milliseconds timeout) const;
    /// The channel of the oldest publish if it has waited `timeout` at
    /// `now`.
    std::optional<std::uint64_t> overdue_channel(time_point now, std::chrono::milliseconds timeout) const;
    /// Forgets every publish sent on `channel` and hands back their
    /// handlers, in the order sent (each to be failed by the caller).
    std::vector<std::unique_ptr<done_handler>> give_up(std::uint64_t channel);

    bool empty() const noexcept { return entries_.empty(); }
    std::size_t size() const noexcept { return entries_.size(); }

private:
    struct entry {
        std::uint64_t id;
        std::uint64_t channel;
        std::size_t fingerprint;
        time_point sent;
        // Behind a pointer, here and in give_up(): entries move inside the
        // deque, and Boost 1.81's any_completion_handler cannot be
        // move-assigned (its operator= wraps the handler in itself instead).
        std::unique_ptr<done_handler> done;
        std::unique_ptr<amqp::diagnostics> returned;  ///< set by a matched return (rare)
    };
    std::deque<entry> entries_;  // ascending id, so ascending sent
    std::uint64_t next_id_ = 0;
};

}  // namespace tarry::detail
