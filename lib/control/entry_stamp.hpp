// What every entry the control layer writes carries (a tombstone, a
// schedule entry, a checkpoint's part or its announcement): its type, its
// id, when it was written (whole seconds) and persistence.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/time/epoch_text.hpp"
#include "tarry/time/time_points.hpp"

#include <string>
#include <string_view>

namespace tarry::control::detail {

inline void stamp(amqp::basic_properties& p, std::string_view type, std::string id, wall_time written) {
    p.type = std::string(type);
    p.message_id = std::move(id);
    p.timestamp = epoch_whole_seconds(written);
    p.delivery_mode = 2;
}

}  // namespace tarry::control::detail
