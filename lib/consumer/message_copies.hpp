// The copies the consumer republishes in place of a delivery: parked copies
// and dead letters. Pure functions over messages.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/schedule/clock.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace tarry::detail {

/// Longest x-tarry-reason written; longer reasons are cut with "...".
inline constexpr std::size_t max_reason_length = 1024;

/// The copy to park: the original's properties and body, the broker's death
/// headers dropped, perform_job_at set to `due` (so an x-delay or default
/// delay is not counted again from the copy's arrival), and no expiration
/// (checked against the due time already; a per-message TTL would race the
/// wait queue's).
amqp::message parked_copy(const amqp::message& original, wall_time due, wall_time now);

/// The copy to dead-letter: the original with the broker's death headers
/// dropped, no expiration (a dead letter is kept until someone looks), and
/// x-tarry-reason (bounded length) and x-tarry-attempt set.
amqp::message dead_letter_copy(const amqp::message& original, std::string_view reason,
                               std::uint32_t attempt);

/// `text` cut to at most max_length bytes, ending in "..." when cut.
std::string bounded(std::string_view text, std::size_t max_length = max_reason_length);

}  // namespace tarry::detail
