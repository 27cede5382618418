// Parked copies and dead letters (see the header).
#include "message_copies.hpp"

#include "tarry/contract/schedule_headers.hpp"

namespace tarry::detail {

std::string bounded(std::string_view text, std::size_t max_length) {
    if (text.size() <= max_length) return std::string(text);
    const std::size_t keep = max_length > 3 ? max_length - 3 : 0;
    return std::string(text.substr(0, keep)) + "...";
}

namespace {
amqp::message republishable(const amqp::message& original) {
    amqp::message copy = original;
    contract::strip_broker_death_headers(copy.properties);
    copy.properties.expiration.reset();
    return copy;
}
}  // namespace

amqp::message parked_copy(const amqp::message& original, wall_time due, wall_time now) {
    amqp::message copy = republishable(original);
    contract::write_schedule(copy.properties, due, now);
    return copy;
}

amqp::message dead_letter_copy(const amqp::message& original, std::string_view reason,
                               std::uint32_t attempt) {
    amqp::message copy = republishable(original);
    if (!copy.properties.headers) copy.properties.headers.emplace();
    copy.properties.headers->set(std::string(contract::reason_header), bounded(reason));
    copy.properties.headers->set(std::string(contract::attempt_header),
                                 static_cast<std::int64_t>(attempt));
    return copy;
}

}  // namespace tarry::detail
