// A worker's topology as values (see tarry/consumer/worker_topology.hpp):
// the same functions the consumer declares from, with every part declared.
#include "tarry/consumer/worker_topology.hpp"

#include "consumer_topology.hpp"

namespace tarry {

amqp::topology worker_topology(const subscription_options& o) {
    subscription_options declaring = o;
    declaring.declare_queue = true;
    declaring.declare_own_queues = true;
    amqp::topology t;
    if (auto cascade = detail::cascade_parking(declaring)) t = std::move(*cascade);
    auto queues = detail::consumer_topology(declaring);
    t.queues.insert(t.queues.begin(), std::make_move_iterator(queues.begin()), std::make_move_iterator(queues.end()));
    if (o.publish_events) t.exchanges.push_back(detail::events_exchange(o));
    return t;
}

}  // namespace tarry
