// What a program declares on a broker, as plain values: exchanges, queues
// and the bindings between them, in the order they can be declared. A
// delay cascade's (tarry/parking/delay_cascade.hpp: cascade_topology) and a
// worker's (tarry/consumer/worker_topology.hpp) are both this.
// tarry/parking/cascade_declaration.hpp declares one over AMQP; `tarry
// topology export` writes one as RabbitMQ definitions or Terraform.
// Plain values: copy them, build them on any thread.
#pragma once

#include "tarry/amqp/channel_options.hpp"

#include <string>
#include <vector>

namespace tarry::amqp {

/// A binding to declare: `source` exchange to `destination`, a queue or
/// (to_exchange) an exchange.
struct binding {
    std::string source;        ///< the exchange bound from
    std::string destination;   ///< the queue (or exchange) bound to
    bool to_exchange = false;  ///< destination is an exchange (exchange.bind)
    std::string routing_key;   ///< the binding key (a pattern: topic exchanges)
};

/// What to declare, in order: exchanges, then queues, then bindings.
struct topology {
    std::vector<exchange_options> exchanges;  ///< declared first
    std::vector<queue_options> queues;        ///< then these
    std::vector<binding> bindings;            ///< then these
};

}  // namespace tarry::amqp
