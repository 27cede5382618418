// The kind of queue tarry declares, and the arguments that kind needs.
// Plain values; any thread.
#pragma once

#include "tarry/amqp/wire/field_table.hpp"

namespace tarry::amqp {

enum class queue_kind {
    classic,  ///< one node's queue (durable)
    quorum,   ///< replicated over a cluster's nodes (Raft); x-queue-type quorum
};

/// Adds to `arguments` what a queue of `kind` needs: nothing for classic;
/// x-queue-type quorum for quorum, and, when `dead_letters` (the queue's
/// expired messages move on by dead-lettering), at-least-once
/// dead-lettering (x-dead-letter-strategy at-least-once, which RabbitMQ
/// 3.10 accepts only with x-overflow reject-publish): an expired message
/// leaves the queue only once where it went has confirmed it.
void add_queue_kind_arguments(wire::field_table& arguments, queue_kind kind, bool dead_letters);

}  // namespace tarry::amqp
