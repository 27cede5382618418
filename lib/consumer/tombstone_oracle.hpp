// The core's cancel_oracle over the consumer's table of live tombstones
// (tarry/control/tombstone_table.hpp), or over none: then nothing is ever
// cancelled (subscription_options::read_control_stream off).
#pragma once

#include "core/cancel_oracle.hpp"

#include "tarry/control/tombstone_table.hpp"

namespace tarry::detail {

class tombstone_oracle final : public cancel_oracle {
public:
    /// `table` (may be null) must outlive the oracle.
    explicit tombstone_oracle(const control::tombstone_table* table) noexcept : table_(table) {}
    bool any() const noexcept override { return table_ != nullptr && !table_->empty(); }
    bool cancelled(std::string_view job_id, std::uint64_t generation, wall_time now) const override {
        return table_ != nullptr && table_->covers(job_id, generation, now);
    }

private:
    const control::tombstone_table* table_;
};

}  // namespace tarry::detail
