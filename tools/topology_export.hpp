// A topology (tarry/amqp/topology.hpp: a delay cascade's or a worker's)
// written as infrastructure code, for `tarry topology export`:
// - RabbitMQ definitions JSON (`rabbitmqctl import_definitions`, or the
//   management API): the virtual host, then every exchange, queue and
//   binding, each carrying its `vhost`;
// - Terraform in JSON syntax (`.tf.json`) for the cyrilgdn/rabbitmq
//   provider: rabbitmq_vhost (unless "/"), rabbitmq_exchange,
//   rabbitmq_queue (arguments in arguments_json, which keeps their types)
//   and rabbitmq_binding resources, each binding depending on its ends.
// Neither carries a cascade's descriptor message (definitions hold no
// messages): after importing, `tarry topology declare` with the same
// options writes it.
#pragma once

#include "tarry/amqp/topology.hpp"

#include <string>

namespace cli {

/// Pretty-printed, with a final newline.
std::string definitions_json(const tarry::amqp::topology& t, const std::string& vhost);
std::string terraform_json(const tarry::amqp::topology& t, const std::string& vhost);

}  // namespace cli
