// The baseline of parking's throughput: a bare park loop on tarry's AMQP
// client, what parking is at the broker's speed. One connection consumes
// (basic.consume, the given prefetch); a second publishes each delivery's
// copy to a queue on a confirm channel; when the broker confirms a copy,
// its delivery is acked on the consuming channel. No scheduling, no
// bookkeeping beyond the delivery tag.
#pragma once

#include "consumer_bench_support.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cbench {

/// Jobs/s of the park loop on `queue`, which holds `n` messages, copying
/// each to `to` (a queue that exists): from the first delivery to the n-th
/// ack. Dies when the n-th ack does not come within `limit`.
double raw_park_rate(const amqp::connection_config& config, const std::string& queue, const std::string& to,
                     std::size_t n, std::uint16_t prefetch, std::chrono::seconds limit = 120s);

}  // namespace cbench
