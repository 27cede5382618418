// The pause before each reconnect attempt: refused connects are tried again
// at a steady interval, other failures follow the configured backoff, the
// limits count both, and a success starts again.
#include "detail/reconnect_policy.hpp"

#include "tarry/amqp/connection_config.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
using tarry::amqp::detail::attempt_failure;
using tarry::amqp::detail::reconnect_policy;
namespace retry = tarry::retry;

namespace {
constexpr auto refused = attempt_failure::refused;
constexpr auto other = attempt_failure::other;

/// 100 ms doubling to 30 s, no jitter: every pause is exact.
retry::backoff_policy doubling() { return retry::backoff_policy::exponential(100ms, 2.0, 30s); }

/// The pause after failure `f`; fails the test when the policy gives up.
retry::duration pause_after(reconnect_policy& p, attempt_failure f, retry::duration elapsed = 0ms) {
    auto random = retry::make_random_source(7);
    const auto d = p.after(f, elapsed, random);
    REQUIRE_MESSAGE(d.retry, d.reason);
    return d.delay;
}
}  // namespace

TEST_CASE("refused connects are tried again every refused_interval, however many in a row") {
    reconnect_policy p(doubling(), 250ms);
    for (int i = 0; i < 50; ++i) {
        CAPTURE(i);
        CHECK(pause_after(p, refused, retry::duration(i * 250)) == 250ms);
    }
    CHECK(p.failures() == 50);
}

TEST_CASE("other failures follow the configured backoff, growing") {
    reconnect_policy p(doubling(), 250ms);
    CHECK(pause_after(p, other) == 100ms);
    CHECK(pause_after(p, other) == 200ms);
    CHECK(pause_after(p, other) == 400ms);
    CHECK(pause_after(p, other) == 800ms);
    CHECK(p.failures() == 4);
}

TEST_CASE("refused connects in between do not make the backoff grow") {
    // The broker closes the connection (shutting down), refuses while it is
    // down, then accepts TCP but fails the handshake once (still booting).
    reconnect_policy p(doubling(), 250ms);
    CHECK(pause_after(p, other) == 100ms);
    for (int i = 0; i < 30; ++i) CHECK(pause_after(p, refused) == 250ms);
    CHECK(pause_after(p, other) == 200ms);
    CHECK(pause_after(p, refused) == 250ms);
    CHECK(pause_after(p, other) == 400ms);
    CHECK(p.failures() == 34);
}

TEST_CASE("a success starts both counts again") {
    reconnect_policy p(doubling(), 250ms);
    CHECK(pause_after(p, other) == 100ms);
    CHECK(pause_after(p, other) == 200ms);
    CHECK(pause_after(p, refused) == 250ms);
    p.reset();
    CHECK(p.failures() == 0);
    CHECK(pause_after(p, other) == 100ms);
    CHECK(p.failures() == 1);
    p.reset();
    CHECK(pause_after(p, refused) == 250ms);
    CHECK(pause_after(p, other) == 100ms);
}

TEST_CASE("max_attempts counts every failure in a row, refused ones included") {
    reconnect_policy p(doubling().with_max_attempts(4), 250ms);
    CHECK(pause_after(p, other) == 100ms);
    CHECK(pause_after(p, refused) == 250ms);
    CHECK(pause_after(p, refused) == 250ms);
    auto random = retry::make_random_source(7);
    const auto last = p.after(refused, 600ms, random);
    CHECK_FALSE(last.retry);
    CHECK(last.reason == "max attempts (4) reached");
    p.reset();
    CHECK(pause_after(p, refused) == 250ms);  // a success gives every attempt back
}

TEST_CASE("max_total counts the time since the loss, refused pauses included") {
    reconnect_policy p(doubling().with_max_total(1s), 250ms);
    CHECK(pause_after(p, other, 0ms) == 100ms);
    CHECK(pause_after(p, refused, 500ms) == 250ms);
    CHECK(pause_after(p, refused, 750ms) == 250ms);  // next attempt at exactly 1 s
    auto random = retry::make_random_source(7);
    const auto late = p.after(refused, 751ms, random);
    CHECK_FALSE(late.retry);
    CHECK(late.delay == 0ms);
    CHECK(late.reason == "max total time (1000 ms) would be passed");
    const auto later = p.after(other, 900ms, random);  // 900 + 200 > 1000
    CHECK_FALSE(later.retry);
}

TEST_CASE("refused_interval 0: a refused connect is like any other failure") {
    reconnect_policy p(doubling(), 0ms);
    CHECK(pause_after(p, refused) == 100ms);
    CHECK(pause_after(p, refused) == 200ms);
    CHECK(pause_after(p, other) == 400ms);
}

TEST_CASE("decorrelated jitter grows from the backoff's own pauses, not the refused ones") {
    // With the random source at its top, decorrelated jitter gives just
    // under 3 × the previous pause (the first previous pause is the base).
    auto p = reconnect_policy(retry::backoff_policy::exponential(100ms, 2.0, 30s)
                                  .with_jitter(retry::jitter::decorrelated),
                              250ms);
    retry::random_source top = [] { return 0.999999; };
    const auto first = p.after(other, 0ms, top);
    REQUIRE(first.retry);
    CHECK(first.delay == 299ms);
    for (int i = 0; i < 5; ++i) CHECK(p.after(refused, 0ms, top).delay == 250ms);
    const auto second = p.after(other, 0ms, top);
    CHECK(second.delay == 896ms);  // from 299 ms, not from 250 ms
}

TEST_CASE("connection_config's defaults: 250 ms while refused, reconnect_defaults() otherwise") {
    const tarry::amqp::connection_config c;
    CHECK(c.refused_reconnect_interval == 250ms);
    reconnect_policy p(c.reconnect_backoff, c.refused_reconnect_interval);
    auto random = retry::make_random_source(11);
    const auto first = p.after(other, 0ms, random);
    REQUIRE(first.retry);
    CHECK(first.delay < 100ms);  // 100 ms, full jitter
    for (int i = 0; i < 100; ++i) {
        const auto d = p.after(refused, retry::duration(i * 250), random);
        REQUIRE(d.retry);  // unlimited attempts
        CHECK(d.delay == 250ms);
    }
    const auto again = p.after(other, 30s, random);
    REQUIRE(again.retry);
    CHECK(again.delay < 200ms);  // the backoff's second pause, not its 102nd
}

TEST_CASE("refused with another address untried this round: on to it at once, counted, no pause") {
    reconnect_policy p(doubling(), 250ms);
    auto random = retry::make_random_source(7);
    const auto d = p.after(refused, 0ms, random, true);
    REQUIRE(d.retry);
    CHECK(d.at_once);
    CHECK(d.delay == 0ms);
    CHECK(p.failures() == 1);
    // Other failures wait the backoff, untried addresses or not; moving on
    // did not make it grow.
    const auto o = p.after(other, 0ms, random, true);
    CHECK_FALSE(o.at_once);
    CHECK(o.delay == 100ms);
    // Every address tried: the refused interval.
    const auto r = p.after(refused, 0ms, random, false);
    CHECK_FALSE(r.at_once);
    CHECK(r.delay == 250ms);
    CHECK(pause_after(p, other) == 200ms);
    CHECK(p.failures() == 4);

    SUBCASE("the limits count it") {
        reconnect_policy q(doubling().with_max_attempts(2), 250ms);
        REQUIRE(q.after(refused, 0ms, random, true).at_once);
        const auto last = q.after(refused, 0ms, random, true);
        CHECK_FALSE(last.retry);
        CHECK_FALSE(last.at_once);
        CHECK(last.reason == "max attempts (2) reached");
    }
    SUBCASE("refused_interval 0: refused is like any other failure, never at once") {
        reconnect_policy z(doubling(), 0ms);
        const auto x = z.after(refused, 0ms, random, true);
        CHECK_FALSE(x.at_once);
        CHECK(x.delay == 100ms);
    }
}
