// After a failed attempt: retry after the policy's (or the handler's) delay,
// dead-letter when the limits are reached or retries are off, and
// dead-letter `backoff-failed` when a custom backoff function throws.
#include "failure_plan.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <string>

using namespace std::chrono_literals;
using tarry::detail::plan_after_failure;
namespace retry = tarry::retry;

namespace {
retry::random_source random_source() { return retry::make_random_source(3); }
}  // namespace

TEST_CASE("a failure within the limits is retried after the policy's delay, or the handler's") {
    auto random = random_source();
    const auto policy = retry::backoff_policy::exponential(1s, 2.0, 1h).with_max_attempts(5);
    const auto first = plan_after_failure(policy, 1, "boom", {}, 0ms, 0ms, random);
    CHECK(first.retry);
    CHECK(first.delay == 1s);
    CHECK(first.reason.empty());
    CHECK(plan_after_failure(policy, 3, "boom", {}, 10s, 2s, random).delay == 4s);
    const auto asked = plan_after_failure(policy, 1, "boom", 42ms, 0ms, 0ms, random);
    CHECK(asked.retry);
    CHECK(asked.delay == 42ms);
}

TEST_CASE("limits reached or retries off: dead-lettered attempts-exhausted with the error") {
    auto random = random_source();
    const auto policy = retry::backoff_policy::fixed(1s).with_max_attempts(3);
    const auto last = plan_after_failure(policy, 3, "boom", {}, 0ms, 0ms, random);
    CHECK_FALSE(last.retry);
    CHECK(last.reason == "attempts-exhausted: boom (max attempts (3) reached)");
    const auto late = plan_after_failure(retry::backoff_policy::fixed(1s).with_max_total(10s), 2,
                                         "slow", {}, 9500ms, 1s, random);
    CHECK_FALSE(late.retry);
    CHECK(late.reason.rfind("attempts-exhausted: slow (max total time", 0) == 0);
    const auto off = plan_after_failure(std::nullopt, 1, "boom", 5s, 0ms, 0ms, random);
    CHECK_FALSE(off.retry);
    CHECK(off.reason == "attempts-exhausted: boom (retries are off)");
}

TEST_CASE("a custom backoff that throws: dead-lettered backoff-failed with what() it threw") {
    auto random = random_source();
    unsigned calls = 0;
    const auto policy = retry::backoff_policy::custom([&](unsigned n, retry::random_source&) {
        ++calls;
        if (n == 1) throw std::runtime_error("no delay for attempt 1");
        if (n == 2) throw 42;
        return retry::duration(100ms);
    });
    const auto first = plan_after_failure(policy, 1, "boom", {}, 0ms, 0ms, random);
    CHECK_FALSE(first.retry);
    CHECK(first.reason == "backoff-failed: no delay for attempt 1");
    const auto second = plan_after_failure(policy, 2, "boom", {}, 0ms, 0ms, random);
    CHECK_FALSE(second.retry);
    CHECK(second.reason == "backoff-failed: unknown exception");
    // The handler's own delay does not spare the policy: its limits still decide.
    const auto asked = plan_after_failure(policy, 1, "boom", 5s, 0ms, 0ms, random);
    CHECK_FALSE(asked.retry);
    CHECK(asked.reason == "backoff-failed: no delay for attempt 1");
    const auto third = plan_after_failure(policy, 3, "boom", {}, 0ms, 0ms, random);
    CHECK(third.retry);
    CHECK(third.delay == 100ms);
    CHECK(calls == 4);
    // Attempts exhausted before the function is asked: it is not called.
    const auto capped = plan_after_failure(policy.with_max_attempts(3), 3, "boom", {}, 0ms, 0ms, random);
    CHECK(capped.reason == "attempts-exhausted: boom (max attempts (3) reached)");
    CHECK(calls == 4);
}
