// What the caller of an operation learns when it ends: its diagnostics,
// made from the machine's failure record (see completion.hpp for where
// they go).
#pragma once

#include "machine_types.hpp"

#include "tarry/amqp/error.hpp"

#include <string_view>

namespace tarry::amqp::detail {

/// Nothing on success; otherwise the code, "operation: detail" (the code's
/// message when there is no detail) and the broker's reply when the broker
/// closed the operation's channel or the connection under it. `operation`
/// names what the caller asked for: "queue.declare", "connect", ...
diagnostics op_diagnostics(std::string_view operation, diagnostics failure);

/// The same for an operation the machine completed (moves from `ev`).
diagnostics op_diagnostics(std::string_view operation, ev_op_done& ev);

}  // namespace tarry::amqp::detail
