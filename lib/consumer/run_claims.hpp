// The consumer's run claims (docs/periodic.md, "Run claims"): the table of
// the first claim of each occurrence, filled by the control-stream reader,
// and whether claims are in force at all (they are from the moment the
// reader first attached to the stream: a queue with no control stream has
// no schedules whose copies could compete). The core asks through
// claim_oracle, the workers directly.
// Threads: any (the table is thread-safe, the flag atomic).
#pragma once

#include "core/claim_oracle.hpp"

#include "tarry/amqp/message.hpp"
#include "tarry/control/claim_table.hpp"

#include <atomic>
#include <cstdint>

namespace tarry::detail {

class run_claims final : public claim_oracle {
public:
    run_claims() = default;

    /// The reader attached to the stream: from now on claims decide.
    void enforce() noexcept { in_force_.store(true, std::memory_order_release); }
    bool in_force() const noexcept override { return in_force_.load(std::memory_order_acquire); }
    claim_verdict verdict(std::string_view occurrence_id, std::string_view copy) const override;
    /// The verdict for a copy with `props` at `attempt` (runs for anything
    /// that is no occurrence's first attempt).
    claim_verdict verdict_of(const amqp::basic_properties& props, std::uint32_t attempt) const;

    control::claim_table table;

private:
    std::atomic<bool> in_force_{false};
};

}  // namespace tarry::detail
