// The live tombstones of a queue, in the control layer's expiring table.
#include "tarry/control/tombstone_table.hpp"

#include <algorithm>

namespace tarry::control {

tombstone_table::tombstone_table(std::chrono::milliseconds retention) : by_id_(retention, "tombstone_table") {}

bool tombstone_table::add(const tombstone& t, wall_time now) {
    // One slot per id: the highest generation, kept as long as the newest.
    return by_id_.add(t.job_id, t.generation, t.written, now,
                      [](auto& kept, std::uint64_t generation, wall_time written) {
                          kept.value = std::max(kept.value, generation);
                          kept.written = std::max(kept.written, written);
                          return true;
                      });
}

bool tombstone_table::covers(std::string_view job_id, std::uint64_t generation, wall_time now) const {
    const auto kept = by_id_.find(job_id);
    return kept && generation < kept->value && !by_id_.expired(kept->written, now);
}

std::size_t tombstone_table::expire(wall_time now) { return by_id_.expire(now); }

std::size_t tombstone_table::size() const { return by_id_.size(); }

}  // namespace tarry::control
