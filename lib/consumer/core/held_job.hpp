// A delivery the consumer owns until it is settled: held until due, run,
// then acknowledged, given back or replaced by a copy. Whoever has the
// value owns the settlement: the job store, a worker, or the core.
#pragma once

#include "../packed_message.hpp"

#include "tarry/time/time_points.hpp"

#include <cstdint>

namespace tarry::detail {

struct held_job {
    std::uint64_t delivery_tag = 0;
    wall_time due{};
    packed_message msg;            ///< properties as encoded + body: one allocation
    std::uint32_t incarnation = 0;  ///< incarnation of the lane's channel it came from
    std::uint32_t attempt = 1;
    std::uint32_t delivered_ms = 0;  ///< when it was delivered: ms on the core's steady clock, modulo 2^32
    std::uint16_t lane = 0;        ///< index of the lane it came from
    bool redelivered = false;
    bool counted_holding = false;  ///< counted in its lane's `holding`
};
// 40 bytes: every held job has one, so it counts (bench/RESULTS.md, scenario M).
static_assert(sizeof(held_job) <= 40);

}  // namespace tarry::detail
