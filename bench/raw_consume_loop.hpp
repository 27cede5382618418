// The baseline of the throughput benchmarks: a bare consume-and-ack loop on
// tarry's AMQP client (basic.consume, one basic.ack per delivery on the
// connection's I/O thread, no scheduling), by one consumer or by several
// (a connection each, e.g. one per node of a cluster) sharing one count.
#pragma once

#include "consumer_bench_support.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cbench {

/// Jobs/s of one raw consumer per config in `consumers`, each with
/// `prefetch`, on `queue`, which holds `n` messages: from the first
/// delivery (to any of them) to the n-th ack. Dies when the n-th ack does
/// not come within `limit`.
double raw_consume_rate(const std::vector<amqp::connection_config>& consumers, const std::string& queue,
                        std::size_t n, std::uint16_t prefetch, std::chrono::seconds limit = 120s);

}  // namespace cbench
