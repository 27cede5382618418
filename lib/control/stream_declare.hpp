// Declaring one of a queue's streams (the control stream, the checkpoint
// stream) on a channel of its own, opened for it and closed after: a
// refused declare closes the channel it was sent on, never a caller's. And
// opening a channel to read one.
#pragma once

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace tarry::control::detail {

/// Declares `q` → h; the broker's refusal in h's diagnostics.
void declare_on_own_channel(amqp::connection& conn, amqp::queue_options q, amqp::detail::op_handler<> h);

/// Opens a channel, checks that `stream` exists (a passive declare) and
/// sets the channel's prefetch → `then(ec, channel)`, on the connection's
/// executor; what failed in `diag` (a missing stream: 404 NOT_FOUND, the
/// channel closed by the broker). `diag` must outlive the operation.
void open_for_reading(amqp::connection& conn, std::string stream, std::uint16_t prefetch, amqp::diagnostics& diag,
                      std::function<void(std::error_code, amqp::channel)> then);

}  // namespace tarry::control::detail
