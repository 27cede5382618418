// Retry or dead letter after a failed attempt (see the header).
#include "failure_plan.hpp"

#include "tarry/schedule/worker_pool.hpp"  // exception_text

#include <exception>

namespace tarry::detail {

failure_plan plan_after_failure(const std::optional<retry::backoff_policy>& policy,
                                std::uint32_t attempt, const std::string& error,
                                std::optional<retry::duration> asked, retry::duration elapsed,
                                retry::duration previous, retry::random_source& random) {
    failure_plan plan;
    retry::retry_decision decision;
    if (!policy) {
        decision.reason = "retries are off";
    } else {
        try {
            decision = retry::decide(*policy, attempt, elapsed, previous, random);
        } catch (...) {
            plan.reason = "backoff-failed: " + exception_text(std::current_exception());
            return plan;
        }
    }
    if (!decision.retry) {
        plan.reason = "attempts-exhausted: " + error + " (" + decision.reason + ")";
        return plan;
    }
    plan.retry = true;
    plan.delay = asked.value_or(decision.delay);
    return plan;
}

}  // namespace tarry::detail
