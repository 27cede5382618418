// The soak's ledger of published jobs and their ends (see soak_ledger.hpp).
#include "soak_ledger.hpp"

#include <algorithm>

namespace soak {

void ledger::publish(const published_job& p) {
    if (p.number >= jobs_.size()) jobs_.resize(p.number + 1);
    auto& j = jobs_[p.number];
    j.published = true;
    j.fails = p.fails;
    j.due = p.due;
}

void ledger::add(const worker_event& e) {
    if (e.event == "run" && e.at < e.due) ++early_;
    if (!e.job || *e.job >= jobs_.size() || !jobs_[*e.job].published) {
        ++unknown_;
        return;
    }
    auto& j = jobs_[*e.job];
    if (e.event == "run") {
        ++j.runs;
        // The published due time is written to the microsecond; the worker
        // reads it back from a double: allow 1 µs.
        if (e.attempt == 1 && (e.due - j.due > 1 || j.due - e.due > 1)) j.due_changed = true;
    } else if (e.event == "succeeded") {
        ++j.succeeded;
    } else if (e.event == "dead") {
        ++j.dead;
    }
}

ledger_result ledger::result() const {
    ledger_result r;
    r.early = early_;
    r.unknown = unknown_;
    for (const auto& j : jobs_) {
        if (!j.published) continue;
        ++r.published;
        r.runs += j.runs;
        const bool meant_dead = j.fails >= max_attempts_;
        const std::uint32_t meant_runs = meant_dead ? max_attempts_ : j.fails + 1;
        if (j.runs > meant_runs) r.extra_runs += j.runs - meant_runs;
        if (j.succeeded + j.dead == 0) {
            ++r.lost;
        } else if (meant_dead ? j.succeeded > 0 : j.dead > 0) {
            ++r.wrong_end;
        } else if (meant_dead) {
            ++r.dead_as_meant;
        } else {
            ++r.succeeded;
        }
        if (j.due_changed) ++r.due_changed;
    }
    return r;
}

}  // namespace soak
