// The first run claim of each occurrence, in the control layer's expiring
// table.
#include "tarry/control/claim_table.hpp"

namespace tarry::control {

claim_table::claim_table(std::chrono::milliseconds retention) : winners_(retention, "claim_table") {}

bool claim_table::add(const run_claim& c, wall_time now) {
    // A later claim of a kept occurrence never changes its winner.
    return winners_.add(c.occurrence_id, c.copy, c.written, now,
                        [](auto&, const std::string&, wall_time) { return false; });
}

std::optional<std::string> claim_table::winner(std::string_view occurrence_id) const {
    auto kept = winners_.find(occurrence_id);
    if (!kept) return std::nullopt;
    return std::move(kept->value);
}

std::size_t claim_table::expire(wall_time now) { return winners_.expire(now); }

std::size_t claim_table::size() const { return winners_.size(); }

}  // namespace tarry::control
