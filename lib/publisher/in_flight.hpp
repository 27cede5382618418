// The publishes a publisher has sent and the broker has not yet confirmed,
// in the order sent, and the rule that matches a basic.return to one of
// them (see "Returns" in tarry/publisher/publisher.hpp).
// Not thread-safe: the publisher's strand owns it.
#pragma once

#include "tarry/amqp/error.hpp"
#include "tarry/amqp/message.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string_view>

namespace tarry::detail {

class in_flight {
public:
    /// Records a publish sent on the publisher's channel number `channel`
    /// (its own count of channels opened); returns the publish's id.
    std::uint64_t add(std::uint64_t channel, std::string_view exchange, std::string_view routing_key,
                      const amqp::message& msg);

    /// A basic.return came back on `channel`: marks the earliest publish
    /// sent there with the same exchange, routing key, message_id and body
    /// that no earlier return marked, with `why` (what to tell its caller).
    /// False when none matches.
    bool match_return(std::uint64_t channel, std::string_view exchange, std::string_view routing_key,
                      const amqp::message& msg, amqp::diagnostics why);

    /// Forgets publish `id` (its confirm or failure arrived); the `why` of
    /// the return matched to it, if any.
    std::optional<amqp::diagnostics> land(std::uint64_t id);

    bool empty() const noexcept { return entries_.empty(); }
    std::size_t size() const noexcept { return entries_.size(); }

private:
    struct entry {
        std::uint64_t id;
        std::uint64_t channel;
        std::size_t fingerprint;
        std::unique_ptr<amqp::diagnostics> returned;  ///< set by a matched return (rare)
    };
    std::deque<entry> entries_;  // ascending id
    std::uint64_t next_id_ = 0;
};

}  // namespace tarry::detail
