// The wire contract: how a message says when it is due, and the headers
// tarry itself writes (see docs/wire-contract.md).
//
// Pure functions over message properties: no I/O, no clocks (the caller
// passes "now"), no global state. Safe to call from any thread. The
// publisher writes schedules with these functions and the consumer reads
// them, so both sides agree by construction.
#pragma once

#include "tarry/amqp/wire/field_table.hpp"
#include "tarry/amqp/wire/properties.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace tarry::contract {

/// Absolute due time: seconds since the Unix epoch, any numeric AMQP type,
/// an AMQP timestamp, or a string holding a number or an RFC 3339 time.
inline constexpr std::string_view perform_job_at_header = "perform_job_at";
/// Relative delay in milliseconds (the delayed-message-exchange plugin's
/// header), counted from the `timestamp` property when present, else from
/// arrival. perform_job_at wins when both are present.
inline constexpr std::string_view x_delay_header = "x-delay";
/// 1-based attempt number, written by retries.
inline constexpr std::string_view attempt_header = "x-tarry-attempt";
/// Why a message was dead-lettered (see dead_letter_reason below).
inline constexpr std::string_view reason_header = "x-tarry-reason";
/// Microseconds since the epoch when this copy's schedule was set; a
/// tombstone (tarry/control) drops the copies of a job with an older one.
inline constexpr std::string_view generation_header = "x-tarry-generation";

/// Where a due time came from.
enum class schedule_source {
    perform_job_at,  ///< the perform_job_at header
    x_delay,         ///< the x-delay header
    default_delay    ///< neither: schedule_rules::default_delay
};

/// How a consumer reads schedules: the subscription's policy values.
struct schedule_rules {
    /// Delay of a message with neither header (0 = run at once).
    std::chrono::milliseconds default_delay{0};
    /// Largest accepted delay, counted from arrival; nothing = no limit.
    std::optional<std::chrono::milliseconds> max_delay;
};

/// A schedule that was read successfully.
struct schedule {
    wall_time due;            ///< never before this
    schedule_source source;   ///< which header said so
};

/// A schedule that was refused. `reason` is the text of the x-tarry-reason
/// header: "invalid-schedule: <what was wrong>", "delay-exceeds-max: <...>"
/// or "expired-before-due: <...>", always starting with one of those
/// prefixes and naming the header and value at fault.
struct schedule_refusal {
    std::string reason;  ///< the x-tarry-reason text, as above
};

/// What read_schedule found: a schedule, or why it refused one.
using schedule_result = std::variant<schedule, schedule_refusal>;

/// Reads the due time of a message that arrived at `arrival` (wall clock):
/// perform_job_at, else x-delay, else rules.default_delay. Refuses, with a
/// reason, a wrong type, NaN, infinity, a negative epoch or delay, a time
/// past year 9999, an unparsable string, a delay (due - arrival) above
/// rules.max_delay, and a message whose `expiration` property (decimal ms,
/// counted from `timestamp` when present, else from arrival) ends before it
/// is due. Never throws on any input.
/// Due times are rounded up to the microsecond (never early). "Past year
/// 9999" also means past the end of wall_time when that comes first
/// (2262-04-11 for a nanosecond system_clock).
schedule_result read_schedule(const amqp::wire::basic_properties& props, wall_time arrival,
                              const schedule_rules& rules);

/// Parses an RFC 3339 date-time ("2026-11-22T10:00:00Z",
/// "2026-11-22t10:00:00.125+02:00"; a space for 'T' is accepted). Nothing
/// on any malformed or out-of-range input. Never throws.
/// Out of range: a field (month, day incl. leap years, hour 0-23, minute
/// 0-59, second 0-60, offset up to ±23:59) or an instant wall_time cannot
/// hold. Second 60 reads as the next minute's :00; fraction digits below
/// the microsecond round up.
std::optional<wall_time> parse_rfc3339(std::string_view text);

/// Writes the schedule onto outgoing properties: perform_job_at as a double
/// (epoch seconds, microsecond precision) replacing any earlier one,
/// x-delay removed, and `timestamp` set to `now` (whole seconds) when it is
/// not set. Headers are created when absent.
void write_schedule(amqp::wire::basic_properties& props, wall_time due, wall_time now);

/// Removes the headers RabbitMQ adds on dead-lettering (x-death,
/// x-first-death-*, x-last-death-*) from a copy about to be republished;
/// RabbitMQ's cycle detection silently drops a message that carries an
/// x-death naming the queue it is dead-lettered into again.
void strip_broker_death_headers(amqp::wire::basic_properties& props);

/// The attempt number in x-tarry-attempt (any integer type ≥ 1), else 1.
std::uint32_t read_attempt(const amqp::wire::basic_properties& props) noexcept;

/// The generation in x-tarry-generation (any integer type ≥ 0), else 0: a
/// message published without one (by another client) is generation 0.
std::uint64_t read_generation(const amqp::wire::basic_properties& props) noexcept;

/// Sets x-tarry-generation (a signed 64-bit integer, as RabbitMQ's clients
/// read it), replacing any earlier one; headers are created when absent.
void write_generation(amqp::wire::basic_properties& props, std::uint64_t generation);

/// A fresh generation for what is written at `now` (a job, a reschedule's
/// copy, a tombstone, a schedule command, a replayed dead letter): µs since
/// the epoch, strictly above every generation this process has given
/// before, so two writers of one process never share one, even when the
/// clock steps back. Any thread.
std::uint64_t next_generation(wall_time now) noexcept;

}  // namespace tarry::contract
