// The successor of a periodic occurrence (docs/periodic.md): what a
// consumer publishes, confirmed, before it settles an occurrence that ran.
// Pure: no I/O, no clock read. Not installed.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/time/time_points.hpp"

#include <optional>

namespace tarry::detail {

struct occurrence_successor {
    amqp::message msg;  ///< the next occurrence: the same template, number + 1, a new copy id
    wall_time due{};    ///< its nominal time
};

/// The successor of `occurrence` (its properties and body), released at
/// `released` (when it started to run): by the schedule in its
/// x-tarry-spec and its misfire policy (periodic::on_release), due at the
/// next nominal time, with the same generation. Nothing when it is not an
/// occurrence, is a retry of one (attempt above 1: its successor was
/// published by the first attempt), its headers or spec cannot be read, or
/// its chain ends (past its end or limit).
std::optional<occurrence_successor> successor_of(const amqp::message& occurrence, std::uint32_t attempt,
                                                 wall_time released, wall_time now);

/// Whether `m`, falling due at `released`, is to run: false only for an
/// occurrence (attempt 1) found later than its misfire threshold whose
/// policy does not run it (skip; catch_up beyond its limit). Any job that
/// is no occurrence, or one whose headers cannot be read, runs.
bool runs_when_released(const amqp::message& m, std::uint32_t attempt, wall_time released);

}  // namespace tarry::detail
