// The queues a consumer declares (see consumer_topology.hpp).
#include "consumer_topology.hpp"

#include "tarry/parking/wait_ladder.hpp"

#include <string>

namespace tarry::detail {

namespace {

amqp::queue_options durable(std::string name, queue_kind kind, bool declare) {
    amqp::queue_options q;
    q.name = std::move(name);
    q.durable = true;
    q.passive = !declare;
    amqp::add_queue_kind_arguments(q.arguments, kind, false);
    return q;
}

}  // namespace

std::vector<amqp::queue_options> consumer_topology(const subscription_options& o) {
    std::vector<amqp::queue_options> queues;
    queues.push_back(durable(o.queue, o.queue_type, o.declare_queue));
    if (o.dead_letter_exchange.empty())
        queues.push_back(durable(o.dead_letter_queue_name(), o.queue_type, o.declare_own_queues));
    const parking::wait_ladder ladder(o.queue, o.effective_min_park_ttl(), o.hold_horizon);
    for (const auto& w : ladder.queues()) {
        auto q = durable(w.name, o.queue_type, o.declare_own_queues);
        for (const auto& a : w.arguments.entries()) q.arguments.set(a.name, a.value);
        // An expired job leaves its wait queue only once the work queue
        // has confirmed it.
        amqp::add_queue_kind_arguments(q.arguments, o.queue_type, true);
        queues.push_back(std::move(q));
    }
    return queues;
}

}  // namespace tarry::detail
