// The copies the consumer republishes in place of a delivery: parked copies
// and dead letters. Pure functions over messages.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
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

/// Headers tarry writes on retry copies and dead letters.
inline constexpr std::string_view first_attempt_header = "x-tarry-first-attempt-at";  ///< epoch s, double
inline constexpr std::string_view last_error_header = "x-tarry-last-error";           ///< bounded text
inline constexpr std::string_view last_delay_header = "x-tarry-last-delay-ms";        ///< int64 ms

/// What a failed attempt leaves on its copies.
struct failure_note {
    std::uint32_t attempt = 1;        ///< the attempt that failed
    wall_time first_attempt{};        ///< when attempt 1 started
    std::string error;                ///< the handler's error
};

/// When attempt 1 started, from x-tarry-first-attempt-at; `fallback` when
/// absent or unreadable.
wall_time first_attempt_of(const amqp::message& m, wall_time fallback);
/// The delay before the failed attempt, from x-tarry-last-delay-ms (0 when absent).
std::chrono::milliseconds last_delay_of(const amqp::message& m);

/// The copy that retries: the original with the broker's death headers and
/// expiration dropped, x-tarry-attempt = note.attempt + 1, perform_job_at =
/// `due`, and the first-attempt time, last error (bounded) and this delay.
amqp::message retry_copy(const amqp::message& original, const failure_note& note, wall_time due,
                         std::chrono::milliseconds delay, wall_time now);

/// A dead letter for a failed job: dead_letter_copy() plus the failure's
/// first-attempt time and last error.
amqp::message failed_dead_letter_copy(const amqp::message& original, std::string_view reason,
                                      const failure_note& note);

/// The original of a dead letter, to replay: every x-tarry-* header tarry
/// wrote (attempt, reason, errors, times) and the broker's death headers
/// dropped, so it starts again at attempt 1; and a new x-tarry-generation,
/// `now` in µs: a replay schedules the job anew, so a tombstone written
/// before it does not drop it, one written after it does.
amqp::message replay_copy(const amqp::message& dead_letter, wall_time now);

/// A delivery given back to the work queue by a copy instead of a nack (a
/// quorum queue's delivery limit): the same message without the broker's
/// x-delivery-count and x-acquired-count, which would count against the
/// new message.
amqp::message requeue_copy(const amqp::message& original);

/// A delivery renewed at admission (it came back close to the delivery
/// limit): requeue_copy() with its schedule written as an absolute due
/// time (perform_job_at = `due`, x-delay removed), so that a relative delay
/// counted from arrival does not start again.
amqp::message renewed_copy(const amqp::message& original, wall_time due, wall_time now);

/// The copy to dead-letter: the original with the broker's death headers
/// dropped, no expiration (a dead letter is kept until someone looks), and
/// x-tarry-reason (bounded length) and x-tarry-attempt set.
amqp::message dead_letter_copy(const amqp::message& original, std::string_view reason,
                               std::uint32_t attempt);

/// A dead letter for a message that cannot be read or copied, and its
/// reason (x-tarry-reason, bounded; it starts "unreadable: ").
struct unreadable_letter {
    std::string reason;
    amqp::message copy;
};

/// The dead letter of a delivery that could not be read; `read` is what of
/// it could be (delivery::msg).
/// - Properties that did not decode: the letter's properties are tarry's
///   own (persistent, x-tarry-reason, x-tarry-attempt), and its body is
///   the raw properties block as it came, then the original body when it
///   was kept; the reason says how many bytes are which.
/// - Properties that decoded, body over the limit: dead_letter_copy() of
///   the original, whose body is empty (it was dropped unread, never held).
unreadable_letter unreadable_dead_letter(const amqp::message& read, const amqp::unreadable_content& why,
                                         std::uint32_t attempt);

/// The dead letter of a message whose `copy_name` ("parked copy", "retry
/// copy", "dead letter") was refused before it was sent because its
/// properties do not fit one frame of `frame_max` bytes (0: not known).
/// No copy with the original's headers can be sent, so the letter carries
/// them in its body: its body is the original's properties as encoded,
/// then the original body; its properties are the original's small ones
/// (message_id, correlation_id, type, app_id, timestamp, delivery_mode,
/// priority) and tarry's x-tarry-reason and x-tarry-attempt. At most about
/// 2.2 KB of properties, so it fits any frame_max (at least 4096).
unreadable_letter unfit_dead_letter(const amqp::message& original, std::string_view copy_name,
                                    std::uint32_t frame_max, std::uint32_t attempt);

/// `text` cut to at most max_length bytes, ending in "..." when cut.
std::string bounded(std::string_view text, std::size_t max_length = max_reason_length);

}  // namespace tarry::detail
