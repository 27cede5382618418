// The queues a consumer declares before it consumes, as plain values: the
// work queue, the dead-letter queue (unless dead letters go to an exchange)
// and the parking ladder's wait queues, with the arguments their
// queue_type needs, passive where the options say someone else declares
// them; the events exchange; and what each lane's basic.consume carries.
// tarry/consumer/worker_topology.hpp gives the same as one topology.
#pragma once

#include "tarry/amqp/channel_options.hpp"
#include "tarry/consumer/subscription_options.hpp"
#include "tarry/parking/delay_cascade.hpp"

#include <optional>

#include <vector>

namespace tarry::detail {

/// In declaration order: the work queue first. No wait queues when
/// parking goes through a delay cascade.
std::vector<amqp::queue_options> consumer_topology(const subscription_options& o);

/// With a parking_strategy: the delay cascade and the work queue's delivery
/// queue, to declare after the queues above; only the entry exchange and
/// that delivery queue, passive, when declare_own_queues is false. Nothing
/// with the wait ladder.
std::optional<parking::cascade_topology> cascade_parking(const subscription_options& o);

/// The events exchange (publish_events): a durable topic exchange named
/// events_exchange.
amqp::exchange_options events_exchange(const subscription_options& o);

/// What each lane's basic.consume asks for: the work queue and, with
/// consumer_timeout_argument, x-consumer-timeout = broker_consumer_timeout
/// (ms, a long-long).
amqp::consume_options lane_consume_options(const subscription_options& o);

}  // namespace tarry::detail
