// Declaring one of a queue's streams (the control stream, the checkpoint
// stream) on a channel of its own, opened for it and closed after: a
// refused declare closes the channel it was sent on, never a caller's.
#pragma once

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"

namespace tarry::control::detail {

/// Declares `q` → h; the broker's refusal in h's diagnostics.
void declare_on_own_channel(amqp::connection& conn, amqp::queue_options q, amqp::detail::op_handler<> h);

}  // namespace tarry::control::detail
