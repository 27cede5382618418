// What the consumer shows of itself beyond stats(): metrics(), health(),
// held_jobs() and wait_queues(), each a snapshot taken on any thread.
#include "consumer_impl.hpp"
#include "held_jobs_listing.hpp"

#include "tarry/parking/wait_ladder.hpp"

namespace tarry {

consumer_metrics consumer::impl::metrics() const {
    consumer_metrics m;
    m.counters = stats();
    const auto& c = *counters_;
    for (std::size_t i = 0; i < m.dead_lettered_by_reason.size(); ++i)
        m.dead_lettered_by_reason[i] = c.dead_lettered_by_reason[i].load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < m.requeued_by_reason.size(); ++i)
        m.requeued_by_reason[i] = c.requeued_by_reason[i].load(std::memory_order_relaxed);
    m.start_lateness = c.start_lateness.snapshot();
    m.handler_duration = c.handler_duration.snapshot();
    m.next_due = detail::next_due(held_);
    if (const auto oldest = core_.oldest_unsettled())
        m.oldest_unacked_age = std::max(std::chrono::steady_clock::now() - *oldest, steady_time::duration::zero());
    m.connected = health().consuming;
    m.recent_dead_letters = dead_letters_.newest_first();
    return m;
}

consumer_health consumer::impl::health() const {
    std::lock_guard lock(health_mutex_);
    return health_.health(consuming_.load(std::memory_order_relaxed));
}

held_jobs_page consumer::impl::held_jobs(std::size_t limit, std::string_view after, std::error_code& ec) const {
    return detail::list_held_jobs(held_, limit, after, ec);
}

std::vector<std::string> consumer::impl::wait_queues() const {
    if (options_.parking_strategy) return {};  // the cascade's queues are shared by every destination
    const parking::wait_ladder ladder(options_.queue, options_.effective_min_park_ttl(), options_.hold_horizon);
    std::vector<std::string> names;
    for (const auto& q : ladder.queues()) names.push_back(q.name);
    return names;
}

}  // namespace tarry
