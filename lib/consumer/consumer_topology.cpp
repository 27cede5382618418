// The queues a consumer declares (see consumer_topology.hpp).
#include "consumer_topology.hpp"

#include "tarry/parking/wait_ladder.hpp"

#include <algorithm>

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
    if (o.parking_strategy) return queues;  // parked through a delay cascade instead (cascade_parking)
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

std::optional<parking::cascade_topology> cascade_parking(const subscription_options& o) {
    if (!o.parking_strategy) return std::nullopt;
    const parking::delay_cascade cascade(*o.parking_strategy);
    const parking::cascade_destination work{"", o.queue};
    if (o.declare_own_queues) return cascade.topology(work);
    // Only check: the entry exchange and the work queue's delivery queue.
    auto t = cascade.topology();
    parking::cascade_topology check;
    auto entry = std::find_if(t.exchanges.begin(), t.exchanges.end(),
                              [&](const amqp::exchange_options& x) { return x.name == cascade.entry_exchange(); });
    check.exchanges.push_back(*entry);
    check.exchanges.back().passive = true;
    check.queues.push_back(cascade.delivery(work).queues.front());
    check.queues.back().passive = true;
    return check;
}

amqp::exchange_options events_exchange(const subscription_options& o) {
    amqp::exchange_options events;
    events.name = o.events_exchange;
    events.type = "topic";
    events.durable = true;
    return events;
}

amqp::consume_options lane_consume_options(const subscription_options& o) {
    amqp::consume_options co;
    co.queue = o.queue;
    if (o.consumer_timeout_argument)
        co.arguments.set("x-consumer-timeout", static_cast<std::int64_t>(o.broker_consumer_timeout.count()));
    return co;
}

}  // namespace tarry::detail
