// Parking topology (1): wait queues with fixed per-queue TTLs that
// dead-letter back to the work queue.
//
// A job due later than it is safe to hold is republished into the wait queue
// whose TTL brings it back before it is due; the broker expires it from the
// queue head (exact for a fixed per-queue TTL) and dead-letters it to the
// default exchange with the work queue as routing key, where the consumer
// takes it again. TTLs double from `min_ttl` up to `max_ttl` (the hold
// horizon), so a job cycles at most a few times until it can be held, and a
// job due soon can be parked without coming back late. Pure values.
#pragma once

#include "tarry/amqp/wire/field_table.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace tarry::parking {

/// One wait queue of the ladder.
struct wait_queue {
    std::string name;               ///< `<work queue>.wait.<ttl ms>`
    std::chrono::milliseconds ttl;  ///< its x-message-ttl
    /// Its queue.declare arguments: x-message-ttl, x-dead-letter-exchange ""
    /// and x-dead-letter-routing-key = the work queue.
    amqp::wire::field_table arguments;
};

/// The wait queues of one work queue, TTLs doubling up to the hold horizon
/// (see this header's opening comment). A pure value.
class wait_ladder {
public:
    /// TTLs min_ttl, 2·min_ttl, ... while ≤ max_ttl (at least one rung:
    /// min_ttl). Throws std::invalid_argument if min_ttl ≤ 0.
    wait_ladder(std::string work_queue, std::chrono::milliseconds min_ttl,
                std::chrono::milliseconds max_ttl);

    /// Every rung, shortest TTL first: what to declare.
    const std::vector<wait_queue>& queues() const noexcept { return queues_; }

    /// The rung with the largest TTL ≤ `room` (the time a job may spend
    /// parked and still come back before it is due), or nothing when even
    /// the shortest TTL would bring it back late.
    const wait_queue* choose(std::chrono::milliseconds room) const noexcept;

private:
    std::vector<wait_queue> queues_;
};

}  // namespace tarry::parking
