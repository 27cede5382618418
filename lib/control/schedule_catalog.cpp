// Folding schedule upserts and removals into the live schedules.
#include "tarry/control/schedule_catalog.hpp"

namespace tarry::control {

void schedule_catalog::add(const schedule_entry& e) {
    if (const auto* u = std::get_if<schedule_upsert>(&e)) {
        auto& s = by_id_[u->schedule_id];
        if (s.known && u->generation <= s.generation) return;
        s.known = true;
        s.generation = u->generation;
        s.removed = false;
        s.latest = *u;
    } else if (const auto* r = std::get_if<schedule_removal>(&e)) {
        auto& s = by_id_[r->schedule_id];
        if (s.known && r->generation < s.generation) return;
        s.known = true;
        s.generation = r->generation;
        s.removed = true;
        s.latest = {};
    }
}

std::vector<schedule_upsert> schedule_catalog::live() const {
    std::vector<schedule_upsert> out;
    for (const auto& [id, s] : by_id_)
        if (!s.removed) out.push_back(s.latest);
    return out;
}

}  // namespace tarry::control
