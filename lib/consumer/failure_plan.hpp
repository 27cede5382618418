// What becomes of a failed job: a retry after a delay, or a dead letter
// with its reason. A pure function of the retry policy, the failed attempt
// and the times; what a custom backoff function throws is caught here and
// becomes the dead letter's reason, so it never reaches the I/O thread.
#pragma once

#include "tarry/retry/backoff.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tarry::detail {

struct failure_plan {
    bool retry = false;
    retry::duration delay{0};  ///< when retry: how long until the next attempt is due
    std::string reason;        ///< when not: the dead letter's x-tarry-reason
};

/// The plan after attempt `attempt` (from 1) failed with `error`:
/// - no policy (retries off), or its attempt or time limit reached:
///   dead-letter `attempts-exhausted: <error> (<which limit>)`;
/// - the policy's custom delay function threw: dead-letter
///   `backoff-failed: <what()>` ("unknown exception" when it threw no
///   std::exception);
/// - else retry after `asked` (the handler's own delay) when given, or
///   after the policy's delay.
/// `elapsed` is the time since attempt 1 started, `previous` the delay
/// before the attempt that failed (for decorrelated jitter).
failure_plan plan_after_failure(const std::optional<retry::backoff_policy>& policy,
                                std::uint32_t attempt, const std::string& error,
                                std::optional<retry::duration> asked, retry::duration elapsed,
                                retry::duration previous, retry::random_source& random);

}  // namespace tarry::detail
