// The table of run claims: the first claim of an occurrence names its
// winner for good, claims expire by their own written time, and many
// threads may use it at once.
#include "tarry/control/claim_table.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
namespace control = tarry::control;
using tarry::wall_time;

namespace {

const wall_time t0 = wall_time(std::chrono::seconds(1'795'600'000));

control::run_claim claim(std::string occurrence, std::string copy, wall_time written = t0) {
    const auto at = occurrence.find('@');
    return {occurrence, occurrence.substr(0, at), occurrence.substr(at + 1), std::move(copy), written};
}

}  // namespace

TEST_CASE("the first claim of an occurrence wins; later ones, of any copy, change nothing") {
    control::claim_table table;
    CHECK_FALSE(table.winner("tick@100"));
    CHECK(table.add(claim("tick@100", "c1"), t0));
    CHECK(table.winner("tick@100") == std::optional<std::string>("c1"));
    CHECK_FALSE(table.add(claim("tick@100", "c2"), t0));
    CHECK_FALSE(table.add(claim("tick@100", "c1"), t0 + 1s));  // the winner's own claim again
    CHECK(table.winner("tick@100") == std::optional<std::string>("c1"));
    // Another occurrence, of the same schedule or another, is its own.
    CHECK(table.add(claim("tick@101", "c2"), t0));
    CHECK(table.add(claim("tock@100", "c3"), t0));
    CHECK(table.winner("tick@101") == std::optional<std::string>("c2"));
    CHECK(table.winner("tock@100") == std::optional<std::string>("c3"));
    CHECK_FALSE(table.winner("tick@10"));
    CHECK(table.size() == 3);
}

TEST_CASE("claims expire by their written time: an expired one is not added, and expire() frees them") {
    control::claim_table table(10s);
    CHECK_FALSE(table.add(claim("old@1", "c"), t0 + 10s));  // written 10 s before now: expired
    CHECK(table.size() == 0);
    REQUIRE(table.add(claim("a@1", "c1"), t0));
    REQUIRE(table.add(claim("b@1", "c2", t0 + 5s), t0 + 5s));
    CHECK(table.expire(t0 + 9s) == 0);
    CHECK(table.expire(t0 + 10s) == 1);
    CHECK_FALSE(table.winner("a@1"));
    CHECK(table.winner("b@1") == std::optional<std::string>("c2"));
    // Once its first claim is gone, a later claim of the occurrence wins.
    CHECK(table.add(claim("a@1", "c9", t0 + 10s), t0 + 10s));
    CHECK(table.winner("a@1") == std::optional<std::string>("c9"));
    CHECK(table.expire(t0 + 15s) == 1);
    CHECK(table.size() == 1);
}

TEST_CASE("a claim written before one added earlier expires by its own time, and names its winner until then") {
    control::claim_table table(10s);
    REQUIRE(table.add(claim("late@1", "c1", t0 + 5s), t0 + 5s));
    REQUIRE(table.add(claim("early@1", "c2", t0), t0 + 5s));  // an older writer clock
    CHECK(table.expire(t0 + 9s) == 0);
    CHECK(table.winner("early@1") == std::optional<std::string>("c2"));
    CHECK(table.expire(t0 + 12s) == 1);  // not behind the one added before it
    CHECK_FALSE(table.winner("early@1"));
    CHECK(table.winner("late@1") == std::optional<std::string>("c1"));
    CHECK(table.expire(t0 + 15s) == 1);
    CHECK(table.size() == 0);
}

TEST_CASE("a retention that is not positive is refused") {
    CHECK_THROWS_AS(control::claim_table(0ms), std::invalid_argument);
    CHECK_THROWS_AS(control::claim_table(-1ms), std::invalid_argument);
}

TEST_CASE("claim_table: many threads claim the same occurrences at once; each has exactly one winner") {
    control::claim_table table;
    constexpr int threads = 4, occurrences = 2000;
    std::atomic<int> wins{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            for (int i = 0; i < occurrences; ++i) {
                if (table.add(claim("s@" + std::to_string(i), "copy-" + std::to_string(t)), t0)) ++wins;
                const auto w = table.winner("s@" + std::to_string(i));
                CHECK(w.has_value());
            }
        });
    for (auto& th : pool) th.join();
    CHECK(wins == occurrences);
    CHECK(table.size() == static_cast<std::size_t>(occurrences));
}
