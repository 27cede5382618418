// The arguments of a queue kind (see tarry/amqp/queue_kind.hpp).
#include "tarry/amqp/queue_kind.hpp"

#include <string>

namespace tarry::amqp {

void add_queue_kind_arguments(wire::field_table& arguments, queue_kind kind, bool dead_letters) {
    if (kind != queue_kind::quorum) return;
    arguments.set("x-queue-type", std::string("quorum"));
    if (!dead_letters) return;
    arguments.set("x-dead-letter-strategy", std::string("at-least-once"));
    arguments.set("x-overflow", std::string("reject-publish"));
}

}  // namespace tarry::amqp
