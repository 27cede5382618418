// The first run claim of each occurrence, behind one reader-writer lock.
#include "tarry/control/claim_table.hpp"

#include <mutex>
#include <stdexcept>

namespace tarry::control {

claim_table::claim_table(std::chrono::milliseconds retention) : retention_(retention) {
    if (retention <= std::chrono::milliseconds::zero())
        throw std::invalid_argument("claim_table: the retention must be positive");
}

bool claim_table::add(const run_claim& c, wall_time now) {
    if (expired(c.written, now)) return false;
    std::unique_lock lock(mutex_);
    const auto [it, first] = by_occurrence_.try_emplace(c.occurrence_id, entry{c.copy, c.written});
    if (first) added_.emplace_back(c.written, c.occurrence_id);
    return first;
}

std::optional<std::string> claim_table::winner(std::string_view occurrence_id) const {
    std::shared_lock lock(mutex_);
    const auto it = by_occurrence_.find(occurrence_id);
    if (it == by_occurrence_.end()) return std::nullopt;
    return it->second.copy;
}

std::size_t claim_table::expire(wall_time now) {
    std::unique_lock lock(mutex_);
    std::size_t freed = 0;
    // Added in stream order, which is nearly the written order: a claim
    // written earlier than one before it waits behind it (it still names
    // its occurrence's winner meanwhile, as the first claim should).
    while (!added_.empty() && expired(added_.front().first, now)) {
        freed += by_occurrence_.erase(added_.front().second);
        added_.pop_front();
    }
    return freed;
}

std::size_t claim_table::size() const {
    std::shared_lock lock(mutex_);
    return by_occurrence_.size();
}

}  // namespace tarry::control
