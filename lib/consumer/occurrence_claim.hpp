// The run claim a copy of a periodic occurrence makes (docs/periodic.md,
// "Run claims"): what a consumer appends to the control stream when it
// admits the copy, and what it looks up before running it. Pure: no I/O,
// no clock read. Not installed.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/time/time_points.hpp"

#include <cstdint>
#include <optional>

namespace tarry::detail {

/// The claim of the copy with `props`, written at `now`: its occurrence id
/// (message_id), schedule, nominal time and copy id. Nothing when it is no
/// occurrence (no '@' in its message_id, no x-tarry-schedule), a retry of
/// one (attempt above 1: its first attempt was claimed), or its occurrence
/// headers cannot be read.
std::optional<control::run_claim> claim_of(const amqp::basic_properties& props, std::uint32_t attempt,
                                           wall_time now);

}  // namespace tarry::detail
