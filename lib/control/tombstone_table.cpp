// The live tombstones of a queue, behind one reader-writer lock.
#include "tarry/control/tombstone_table.hpp"

#include <algorithm>
#include <mutex>
#include <stdexcept>

namespace tarry::control {

tombstone_table::tombstone_table(std::chrono::milliseconds retention) : retention_(retention) {
    if (retention <= std::chrono::milliseconds::zero())
        throw std::invalid_argument("tombstone_table: the retention must be positive");
}

bool tombstone_table::add(const tombstone& t, wall_time now) {
    if (expired(t.written, now)) return false;
    std::unique_lock lock(mutex_);
    auto [it, fresh] = by_id_.try_emplace(t.job_id, entry{t.generation, t.written});
    if (!fresh) {
        it->second.generation = std::max(it->second.generation, t.generation);
        it->second.written = std::max(it->second.written, t.written);
    }
    added_.emplace_back(t.written, t.job_id);
    count_.store(by_id_.size(), std::memory_order_release);
    return true;
}

bool tombstone_table::covers(std::string_view job_id, std::uint64_t generation, wall_time now) const {
    if (empty()) return false;
    std::shared_lock lock(mutex_);
    const auto it = by_id_.find(job_id);
    return it != by_id_.end() && generation < it->second.generation && !expired(it->second.written, now);
}

std::size_t tombstone_table::expire(wall_time now) {
    std::unique_lock lock(mutex_);
    std::size_t freed = 0;
    while (!added_.empty() && expired(added_.front().first, now)) {
        const auto it = by_id_.find(added_.front().second);
        // Gone already, or kept alive by a later tombstone of the same id.
        if (it != by_id_.end() && expired(it->second.written, now)) {
            by_id_.erase(it);
            ++freed;
        }
        added_.pop_front();
    }
    count_.store(by_id_.size(), std::memory_order_release);
    return freed;
}

std::size_t tombstone_table::size() const {
    std::shared_lock lock(mutex_);
    return by_id_.size();
}

}  // namespace tarry::control
