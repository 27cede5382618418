// Tombstones to and from control-stream entries.
#include "tarry/control/tombstone.hpp"

#include "entry_stamp.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/time/epoch_text.hpp"

#include <algorithm>

namespace tarry::control {

amqp::message to_message(const tombstone& t) {
    amqp::message m;
    detail::stamp(m.properties, tombstone_type, t.job_id, t.written);
    contract::write_generation(m.properties, t.generation);
    return m;
}

std::optional<tombstone> read_tombstone(const amqp::basic_properties& props, std::string& why) {
    why.clear();
    if (props.type != tombstone_type) return std::nullopt;
    if (!props.message_id || props.message_id->empty()) {
        why = "a tombstone without a message_id (the job id)";
        return std::nullopt;
    }
    if (!props.timestamp) {
        why = "a tombstone without a timestamp (when it was written)";
        return std::nullopt;
    }
    const std::uint64_t g = contract::read_generation(props);
    if (g == 0) {
        why = "a tombstone without a positive integer " + std::string(contract::generation_header);
        return std::nullopt;
    }
    return tombstone{*props.message_id, g, from_epoch_whole_seconds(*props.timestamp)};
}

}  // namespace tarry::control
