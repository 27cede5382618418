// What the control stream cancels, as a consumer keeps it: tombstones by job
// id, and schedule upserts and removals by schedule id (an occurrence of a
// schedule is dropped when a later upsert or a removal of its schedule was
// read: docs/periodic.md). Both tables are filled by the control-stream
// reader and read by the core (through tombstone_oracle) and the workers.
// Thread-safe (the tables are).
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/control/tombstone_table.hpp"

#include <chrono>
#include <memory>

namespace tarry::detail {

struct cancellations {
    explicit cancellations(std::chrono::milliseconds retention)
        : jobs(std::make_shared<control::tombstone_table>(retention)),
          schedules(std::make_shared<control::tombstone_table>(retention)) {}

    /// False while neither table holds anything (one atomic load each).
    bool any() const noexcept { return !jobs->empty() || !schedules->empty(); }
    /// Whether the copy with these properties is cancelled at `now`: its
    /// job id by a tombstone of a higher generation, or, when it is an
    /// occurrence (x-tarry-schedule), its schedule by a later upsert or a
    /// removal.
    bool covers(const amqp::basic_properties& props, wall_time now) const;
    /// The same for an occurrence's schedule alone.
    bool schedule_covers(std::string_view schedule_id, std::uint64_t generation, wall_time now) const {
        return schedules->covers(schedule_id, generation, now);
    }

    const std::shared_ptr<control::tombstone_table> jobs;
    const std::shared_ptr<control::tombstone_table> schedules;
};

}  // namespace tarry::detail
