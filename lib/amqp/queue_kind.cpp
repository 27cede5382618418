// The arguments of a queue kind (see tarry/amqp/queue_kind.hpp).
#include "tarry/amqp/queue_kind.hpp"

#include <string>

namespace tarry::amqp {

std::string_view to_string(queue_kind kind) noexcept { return kind == queue_kind::quorum ? "quorum" : "classic"; }

std::optional<queue_kind> queue_kind_from_string(std::string_view text) noexcept {
    if (text == "classic") return queue_kind::classic;
    if (text == "quorum") return queue_kind::quorum;
    return std::nullopt;
}

void add_queue_kind_arguments(wire::field_table& arguments, queue_kind kind, bool dead_letters) {
    if (kind != queue_kind::quorum) return;
    arguments.set("x-queue-type", std::string("quorum"));
    if (!dead_letters) return;
    arguments.set("x-dead-letter-strategy", std::string("at-least-once"));
    arguments.set("x-overflow", std::string("reject-publish"));
}

}  // namespace tarry::amqp
