// What the core asks about cancellation: whether a copy of a job is covered
// by a tombstone (tarry/control/tombstone.hpp). The driver answers from the
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

protected:
    ~cancel_oracle() = default;
};

}  // namespace tarry::detail
