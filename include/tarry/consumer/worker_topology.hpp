// Everything a consumer declares before it consumes, as values: what a team
// that declares its broker as code (RabbitMQ definitions, Terraform) must
// write out before it starts workers with declare_queue and
// declare_own_queues off (echo_worker --no-declare), and what `tarry
// topology export|declare|verify --worker` write, declare and check
// (README, "A worker's topology as code").
// Pure: no I/O; any thread.
#pragma once

#include "tarry/amqp/topology.hpp"
#include "tarry/consumer/subscription_options.hpp"

namespace tarry {

/// What a consumer with `o` declares, every part to be declared (never
/// passive, whatever declare_queue and declare_own_queues say), with the
/// arguments the consumer gives it:
/// - queues: the work queue; its dead-letter queue (unless
///   dead_letter_exchange is set); the wait queues of the parking ladder,
///   or, with a parking_strategy, the work queue's delivery queue of the
///   cascade;
/// - exchanges and bindings: the delay cascade's (with a parking_strategy);
///   the events exchange (with publish_events).
/// Neither the control stream nor the checkpoint stream: commands and
/// consumers declare those when they first write.
amqp::topology worker_topology(const subscription_options& o);

}  // namespace tarry
