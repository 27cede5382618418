// What async_publish and async_reschedule write on a job before sending
// it: the schedule, its generation, an id and the delivery mode; and why a
// schedule is refused. Not installed.
#pragma once

#include "tarry/publisher/publisher.hpp"

#include <cstdint>

namespace tarry::detail {

/// Puts `when` (as due at `now`) and `generation` on `msg`, a fresh random
/// message_id when it has none, delivery_mode 2 when `o.persistent` and it
/// sets none. When the schedule is refused (delay_exceeds_max,
/// invalid_schedule), returns why and leaves `msg` as it was; else an empty
/// code.
amqp::diagnostics schedule_message(amqp::message& msg, const job_schedule& when, wall_time now,
                                   std::uint64_t generation, const publisher_options& o);

}  // namespace tarry::detail
