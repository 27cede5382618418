// Exact delay sequences of every backoff policy, with a scripted random source.
#include "tarry/retry/backoff.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace std::chrono_literals;
using tarry::retry::backoff_policy;
using tarry::retry::duration;
using tarry::retry::jitter;
using tarry::retry::random_source;

namespace {

// Returns the given values in turn, then repeats the last one.
random_source scripted(std::vector<double> values) {
    return [values = std::move(values), i = std::size_t{0}]() mutable {
        const double v = values[std::min(i, values.size() - 1)];
        ++i;
        return v;
    };
}

std::vector<long> delays(const backoff_policy& p, unsigned count, random_source random) {
    std::vector<long> out;
    duration previous{0};
    for (unsigned n = 1; n <= count; ++n) {
        previous = tarry::retry::delay_after(p, n, previous, random);
        out.push_back(static_cast<long>(previous.count()));
    }
    return out;
}

}  // namespace

TEST_CASE("fixed policy gives the same delay every time") {
    auto p = backoff_policy::fixed(250ms);
    CHECK(delays(p, 4, scripted({0.5})) == std::vector<long>{250, 250, 250, 250});
}

TEST_CASE("exponential policy grows by its factor and stops at the cap") {
    auto p = backoff_policy::exponential(100ms, 2.0, 1000ms);
    CHECK(delays(p, 6, scripted({0.5})) == std::vector<long>{100, 200, 400, 800, 1000, 1000});
    auto p3 = backoff_policy::exponential(10ms, 3.0, 10s);
    CHECK(delays(p3, 4, scripted({0.5})) == std::vector<long>{10, 30, 90, 270});
}

TEST_CASE("exponential policy does not overflow for huge attempt numbers") {
    auto p = backoff_policy::exponential(1s, 2.0, 1h);
    random_source r = scripted({0.5});
    CHECK(tarry::retry::delay_after(p, 5000, 0ms, r) == 1h);
    CHECK(tarry::retry::delay_after(p, 4'000'000'000u, 0ms, r) == 1h);
}

TEST_CASE("a factor below one is treated as one") {
    auto p = backoff_policy::exponential(100ms, 0.5, 1s);
    CHECK(delays(p, 3, scripted({0.5})) == std::vector<long>{100, 100, 100});
}

TEST_CASE("full jitter scales the delay by the random value") {
    auto p = backoff_policy::exponential(100ms, 2.0, 10s).with_jitter(jitter::full);
    CHECK(delays(p, 4, scripted({0.0, 0.5, 0.25, 0.999})) == std::vector<long>{0, 100, 100, 799});
}

TEST_CASE("equal jitter keeps at least half the delay") {
    auto p = backoff_policy::exponential(100ms, 2.0, 10s).with_jitter(jitter::equal);
    CHECK(delays(p, 4, scripted({0.0, 0.5, 0.999, 0.25})) == std::vector<long>{50, 150, 399, 500});
}

TEST_CASE("decorrelated jitter draws between base and three times the previous delay") {
    auto p = backoff_policy::exponential(100ms, 2.0, 1000ms).with_jitter(jitter::decorrelated);
    // n=1: [100, 300) at 0.5 -> 200; n=2: [100, 600) at 0.5 -> 350;
    // n=3: [100, 1050) at 1.0- -> capped 1000; n=4: [100, 3000) at 0 -> 100.
    CHECK(delays(p, 4, scripted({0.5, 0.5, 1.0, 0.0})) == std::vector<long>{200, 350, 1000, 100});
}

TEST_CASE("random values out of [0, 1) are clamped, not trusted") {
    auto p = backoff_policy::exponential(100ms, 2.0, 10s).with_jitter(jitter::full);
    CHECK(delays(p, 3, scripted({-3.0, 7.0, std::nan("")})) == std::vector<long>{0, 199, 0});
}

TEST_CASE("custom policy is a function of the attempt number, capped") {
    auto p = backoff_policy::custom([](unsigned n, random_source&) { return duration(n * n * 10); },
                                    duration(200));
    CHECK(delays(p, 5, scripted({0.5})) == std::vector<long>{10, 40, 90, 160, 200});
}

TEST_CASE("max attempts ends retrying after that many runs in all") {
    auto p = backoff_policy::fixed(1s).with_max_attempts(3);
    random_source r = scripted({0.5});
    CHECK(tarry::retry::decide(p, 1, 0ms, 0ms, r).retry);
    CHECK(tarry::retry::decide(p, 2, 0ms, 0ms, r).retry);
    auto last = tarry::retry::decide(p, 3, 0ms, 0ms, r);
    CHECK_FALSE(last.retry);
    CHECK(last.reason == "max attempts (3) reached");
}

TEST_CASE("max total time refuses a retry that would start too late") {
    auto p = backoff_policy::fixed(10s).with_max_total(60s);
    random_source r = scripted({0.5});
    auto ok = tarry::retry::decide(p, 5, 50s, 0ms, r);
    CHECK(ok.retry);
    CHECK(ok.delay == 10s);
    auto late = tarry::retry::decide(p, 6, 51s, 0ms, r);
    CHECK_FALSE(late.retry);
    CHECK(late.reason.find("max total time") != std::string::npos);
}

TEST_CASE("celery defaults: 1 s doubling to 600 s, full jitter, 4 attempts") {
    auto p = backoff_policy::celery_defaults();
    CHECK(delays(p.with_jitter(jitter::none), 12, scripted({0.5})) ==
          std::vector<long>{1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000, 256000,
                            512000, 600000, 600000});
    CHECK(p.spread == jitter::full);
    random_source r = scripted({0.5});
    CHECK(tarry::retry::decide(p, 3, 0ms, 0ms, r).retry);
    CHECK_FALSE(tarry::retry::decide(p, 4, 0ms, 0ms, r).retry);
}

TEST_CASE("sidekiq defaults follow its formula and allow 25 retries") {
    auto p = backoff_policy::sidekiq_defaults();
    // c = n-1: c^4 + 15 + rand(10) * (c + 1); rand(10) = floor(u * 10).
    CHECK(delays(p, 3, scripted({0.0, 0.55, 0.99})) ==
          std::vector<long>{15000, (1 + 15 + 5 * 2) * 1000, (16 + 15 + 9 * 3) * 1000});
    random_source r = scripted({0.0});
    CHECK(tarry::retry::decide(p, 25, 0ms, 0ms, r).retry);
    CHECK_FALSE(tarry::retry::decide(p, 26, 0ms, 0ms, r).retry);
}

TEST_CASE("a seeded random source repeats its sequence") {
    auto a = tarry::retry::make_random_source(42);
    auto b = tarry::retry::make_random_source(42);
    for (int i = 0; i < 100; ++i) {
        const double x = a();
        CHECK(x == b());
        CHECK(x >= 0.0);
        CHECK(x < 1.0);
    }
}
