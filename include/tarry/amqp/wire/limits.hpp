// Limits of the codec that other layers configure: plain constants, no types.
#pragma once

#include <cstdint>

namespace tarry::amqp::wire {

/// The default limit on a content's body_size: 512 MiB (RabbitMQ's own
/// default max_message_size is 128 MiB; this leaves room above it).
inline constexpr std::uint64_t default_max_body_size = 512ull * 1024 * 1024;

}  // namespace tarry::amqp::wire
