// The kind of queue tarry declares, and the arguments that kind needs.
// Plain values; any thread.
#pragma once

#include "tarry/amqp/wire/field_table.hpp"

#include <optional>
#include <string_view>

namespace tarry::amqp {

/// The kind of queue tarry declares (x-queue-type).
enum class queue_kind {
    classic,  ///< one node's queue (durable)
    quorum,   ///< replicated over a cluster's nodes (Raft); x-queue-type quorum
};

/// "classic" or "quorum": the kind's name in command lines and descriptors.
std::string_view to_string(queue_kind kind) noexcept;
/// The kind named "classic" or "quorum"; nothing for any other text.
std::optional<queue_kind> queue_kind_from_string(std::string_view text) noexcept;

/// Adds to `arguments` what a queue of `kind` needs: nothing for classic;
/// x-queue-type quorum for quorum, and, when `dead_letters` (the queue's
/// expired messages move on by dead-lettering), at-least-once
/// dead-lettering (x-dead-letter-strategy at-least-once, which RabbitMQ
/// 3.10 accepts only with x-overflow reject-publish): an expired message
/// leaves the queue only once where it went has confirmed it.
void add_queue_kind_arguments(wire::field_table& arguments, queue_kind kind, bool dead_letters);

}  // namespace tarry::amqp
