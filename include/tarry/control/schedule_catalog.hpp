// The schedules a queue's control stream holds: its upserts and removals
// folded into the latest state per schedule id, as `tarry schedule list`
// and publisher::async_list_schedules show them. Single-threaded (the
// caller's); a value.
#pragma once

#include "tarry/control/schedule_entry.hpp"

#include <map>
#include <string>
#include <vector>

namespace tarry::control {

/// A queue's schedules folded from its control stream's upserts and
/// removals: the latest state per id. A value; single-threaded.
class schedule_catalog {
public:
    /// Takes an entry in stream order; for one id the highest generation
    /// wins whatever the order (an upsert and a removal of one generation:
    /// the removal; two upserts of one generation: the first added).
    /// Claims are ignored.
    void add(const schedule_entry& e);
    /// The schedules whose latest entry is an upsert, by id.
    std::vector<schedule_upsert> live() const;

private:
    struct state {
        bool known = false;  ///< an entry of the id was added
        std::uint64_t generation = 0;
        bool removed = false;
        schedule_upsert latest;
    };
    std::map<std::string, state, std::less<>> by_id_;
};

}  // namespace tarry::control
