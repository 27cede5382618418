// The core's cancel_oracle over the consumer's cancellations (tombstones by
// job id, upserts and removals by schedule id: cancellations.hpp), or over
// none: then nothing is ever cancelled (subscription_options::
// read_control_stream off).
#pragma once

#include "cancellations.hpp"
#include "core/cancel_oracle.hpp"

namespace tarry::detail {

class tombstone_oracle final : public cancel_oracle {
public:
    /// `tables` (may be null) must outlive the oracle.
    explicit tombstone_oracle(const cancellations* tables) noexcept : tables_(tables) {}
    bool any() const noexcept override { return tables_ != nullptr && tables_->any(); }
    bool cancelled(std::string_view job_id, std::uint64_t generation, wall_time now) const override {
        return tables_ != nullptr && tables_->jobs->covers(job_id, generation, now);
    }
    bool schedule_superseded(std::string_view schedule_id, std::uint64_t generation, wall_time now) const override {
        return tables_ != nullptr && tables_->schedule_covers(schedule_id, generation, now);
    }

private:
    const cancellations* tables_;
};

}  // namespace tarry::detail
