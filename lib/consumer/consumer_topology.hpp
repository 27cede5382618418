// The queues a consumer declares before it consumes, as plain values: the
// work queue, the dead-letter queue (unless dead letters go to an exchange)
// and the parking ladder's wait queues, with the arguments their
// queue_type needs, passive where the options say someone else declares
// them.
#pragma once

#include "tarry/amqp/channel_options.hpp"
#include "tarry/consumer/subscription_options.hpp"

#include <vector>

namespace tarry::detail {

/// In declaration order: the work queue first.
std::vector<amqp::queue_options> consumer_topology(const subscription_options& o);

}  // namespace tarry::detail
