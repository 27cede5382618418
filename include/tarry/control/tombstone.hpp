// A tombstone: "drop every copy of job J whose generation is below G", an
// entry of the queue's control stream (tarry/control/control_stream.hpp).
//
// On the wire a tombstone is a message with an empty body and the
// properties type = "tarry.tombstone", message_id = the job id,
// timestamp = when it was written (the writer's clock, whole seconds) and
// the header x-tarry-generation = G. Pure values and functions; any thread.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::control {

/// How long the broker keeps the control stream's entries: its x-max-age,
/// "7D" (tarry/control/control_stream.hpp), and so the longest a tombstone
/// can count.
inline constexpr std::chrono::hours stream_max_age{7 * 24};

/// The `type` property of a tombstone entry.
inline constexpr std::string_view tombstone_type = "tarry.tombstone";

/// "Drop every copy of job `job_id` whose generation is below
/// `generation`" (see this header's opening comment). A plain value.
struct tombstone {
    std::string job_id;            ///< a message_id: 1 to 255 bytes
    std::uint64_t generation = 0;  ///< µs since the epoch; copies below it are dropped
    wall_time written{};           ///< when it was written (kept to whole seconds)

    /// Equal when every field is.
    friend bool operator==(const tombstone&, const tombstone&) = default;
};

/// The entry to append for `t` (see above); persistent (delivery_mode 2).
amqp::message to_message(const tombstone& t);

/// Reads an entry of the control stream as a tombstone. Nothing when the
/// entry is not one: then `why` is empty for an entry of another type
/// (which the reader skips) and says what is wrong for a malformed
/// tombstone (no message_id, no timestamp, a missing or non-positive
/// generation). Never throws on any properties.
std::optional<tombstone> read_tombstone(const amqp::basic_properties& props, std::string& why);

}  // namespace tarry::control
