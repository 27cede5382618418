// The pause before each reconnect attempt (see the header).
#include "reconnect_policy.hpp"

#include <utility>

namespace tarry::amqp::detail {

reconnect_policy::reconnect_policy(retry::backoff_policy backoff, retry::duration refused_interval)
    : backoff_(std::move(backoff)), refused_interval_(refused_interval) {}

reconnect_decision reconnect_policy::after(attempt_failure f, retry::duration elapsed,
                                           retry::random_source& random, bool untried_address) {
    ++failures_;
    reconnect_decision out;
    // The limits count every failure in a row (worded as retry::decide words them).
    if (backoff_.max_attempts != 0 && failures_ >= backoff_.max_attempts) {
        out.reason = "max attempts (" + std::to_string(backoff_.max_attempts) + ") reached";
        return out;
    }
    const bool refused = f == attempt_failure::refused && refused_interval_.count() > 0;
    if (refused && untried_address) {
        out.at_once = true;  // out.delay stays 0
    } else if (refused) {
        out.delay = refused_interval_;
    } else {
        out.delay = retry::delay_after(backoff_, ++backoff_failures_, previous_, random);
        previous_ = out.delay;
    }
    if (backoff_.max_total.count() > 0 && elapsed + out.delay > backoff_.max_total) {
        out.reason = "max total time (" + std::to_string(backoff_.max_total.count()) +
                     " ms) would be passed";
        out.delay = retry::duration{0};
        out.at_once = false;
        return out;
    }
    out.retry = true;
    return out;
}

void reconnect_policy::reset() noexcept {
    failures_ = 0;
    backoff_failures_ = 0;
    previous_ = retry::duration{0};
}

}  // namespace tarry::amqp::detail
