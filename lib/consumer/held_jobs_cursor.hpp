// The cursor of consumer::held_jobs(): a place in the delay queue's listing
// order as a short string ("r<seq>" for the ready path, "<due>.<seq>" for a
// held job, in hex). Opaque to callers; a string that is not one does not
// decode.
#pragma once

#include "tarry/schedule/delay_queue.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace tarry::detail {

std::string encode_cursor(const queue_place& at);
std::optional<queue_place> decode_cursor(std::string_view text) noexcept;

}  // namespace tarry::detail
