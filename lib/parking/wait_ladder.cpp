// Parking topology (1): the ladder of fixed-TTL wait queues (see the header).
#include "tarry/parking/wait_ladder.hpp"

#include <cstdint>
#include <stdexcept>

namespace tarry::parking {

wait_ladder::wait_ladder(std::string work_queue, std::chrono::milliseconds min_ttl,
                         std::chrono::milliseconds max_ttl) {
    if (min_ttl.count() <= 0) throw std::invalid_argument("wait_ladder: min_ttl must be positive");
    for (auto ttl = min_ttl; queues_.empty() || ttl <= max_ttl; ttl *= 2) {
        wait_queue q;
        q.name = work_queue + ".wait." + std::to_string(ttl.count());
        q.ttl = ttl;
        q.arguments.set("x-message-ttl", static_cast<std::int64_t>(ttl.count()));
        q.arguments.set("x-dead-letter-exchange", std::string());
        q.arguments.set("x-dead-letter-routing-key", work_queue);
        queues_.push_back(std::move(q));
        if (ttl > max_ttl / 2) break;  // the next rung would pass max_ttl (or overflow)
    }
}

const wait_queue* wait_ladder::choose(std::chrono::milliseconds room) const noexcept {
    const wait_queue* best = nullptr;
    for (const auto& q : queues_) {
        if (q.ttl > room) break;
        best = &q;
    }
    return best;
}

}  // namespace tarry::parking
