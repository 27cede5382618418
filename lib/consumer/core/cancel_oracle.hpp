// What the core asks about cancellation: whether a copy of a job is covered
// by a tombstone (tarry/control/tombstone.hpp), or an occurrence by a later
// upsert or a removal of its schedule (docs/periodic.md). The driver answers from the
// consumer's control::tombstone_table, which the control-stream reader
// fills; tests answer from a plain set. The core asks when it admits a
// delivery and when it settles a job that ran; workers ask before running
// one (consumer_workers.hpp).
#pragma once

#include "tarry/time/time_points.hpp"

#include <cstdint>
#include <string_view>

namespace tarry::detail {

class cancel_oracle {
public:
    /// False when no tombstone is known at all: the fast check, before the
    /// job id and generation are read.
    virtual bool any() const noexcept = 0;
    /// Whether the copy of `job_id` with `generation` is cancelled at `now`.
    virtual bool cancelled(std::string_view job_id, std::uint64_t generation, wall_time now) const = 0;
    /// Whether an occurrence of schedule `schedule_id` with `generation` is
    /// dropped at `now`: a later upsert or a removal of its schedule was read.
    virtual bool schedule_superseded(std::string_view, std::uint64_t, wall_time) const { return false; }

protected:
    ~cancel_oracle() = default;
};

}  // namespace tarry::detail
