// The table of live tombstones: what it covers, expiry by each tombstone's
// own time, and use from many threads at once.
#include "tarry/control/tombstone_table.hpp"

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

}  // namespace

TEST_CASE("a tombstone covers the job's older generations only, and no other job") {
    control::tombstone_table table;
    CHECK(table.empty());
    CHECK_FALSE(table.covers("a", 0, t0));
    REQUIRE(table.add({"a", 100, t0}, t0));
    CHECK_FALSE(table.empty());
    CHECK(table.covers("a", 0, t0));    // published without a generation (another client)
    CHECK(table.covers("a", 99, t0));
    CHECK_FALSE(table.covers("a", 100, t0));  // the reschedule's own new copy
    CHECK_FALSE(table.covers("a", 101, t0));
    CHECK_FALSE(table.covers("b", 0, t0));
    CHECK_FALSE(table.covers("", 0, t0));
    CHECK_FALSE(table.covers("a-longer", 0, t0));
    CHECK(table.size() == 1);
}

TEST_CASE("per job the highest generation counts, whatever order the tombstones come in") {
    control::tombstone_table table;
    table.add({"a", 200, t0}, t0);
    table.add({"a", 100, t0 + 1s}, t0 + 1s);  // an older reschedule's, read later
    CHECK(table.covers("a", 150, t0 + 1s));
    CHECK_FALSE(table.covers("a", 200, t0 + 1s));
    table.add({"a", 300, t0 + 2s}, t0 + 2s);
    CHECK(table.covers("a", 250, t0 + 2s));
    CHECK_FALSE(table.covers("a", 300, t0 + 2s));
    CHECK(table.size() == 1);
}

TEST_CASE("a tombstone counts for the retention after it was written, by its own time, then is freed") {
    control::tombstone_table table(10s);
    CHECK(table.retention() == 10s);
    table.add({"a", 100, t0}, t0);
    table.add({"b", 100, t0 + 5s}, t0 + 5s);
    CHECK(table.covers("a", 1, t0 + 9999ms));
    CHECK_FALSE(table.covers("a", 1, t0 + 10s));  // ignored once expired, before expire() frees it
    CHECK(table.size() == 2);
    CHECK(table.expire(t0 + 10s) == 1);
    CHECK(table.size() == 1);
    CHECK(table.covers("b", 1, t0 + 10s));
    CHECK(table.expire(t0 + 15s) == 1);
    CHECK(table.empty());
    CHECK(table.expire(t0 + 60s) == 0);
}

TEST_CASE("a tombstone already expired when read is not kept") {
    control::tombstone_table table(10s);
    CHECK_FALSE(table.add({"a", 100, t0}, t0 + 10s));
    CHECK(table.empty());
    CHECK(table.add({"a", 100, t0}, t0 + 9s));
}

TEST_CASE("a later tombstone of the same job keeps it alive past the first one's expiry") {
    control::tombstone_table table(10s);
    table.add({"a", 100, t0}, t0);
    table.add({"a", 200, t0 + 8s}, t0 + 8s);
    CHECK(table.expire(t0 + 12s) == 0);
    CHECK(table.covers("a", 150, t0 + 12s));
    CHECK(table.expire(t0 + 18s) == 1);
    CHECK_FALSE(table.covers("a", 150, t0 + 18s));
}

TEST_CASE("a tombstone written out of order (another writer's clock behind) is freed by its own time") {
    control::tombstone_table table(10s);
    table.add({"late-clock", 100, t0 + 5s}, t0 + 5s);
    table.add({"early-clock", 100, t0}, t0 + 5s);
    CHECK_FALSE(table.covers("early-clock", 1, t0 + 11s));  // expired by its own time
    CHECK(table.expire(t0 + 11s) == 1);  // not behind the one added before it
    CHECK(table.size() == 1);
    CHECK(table.covers("late-clock", 1, t0 + 11s));
    CHECK(table.expire(t0 + 15s) == 1);
    CHECK(table.empty());
}

TEST_CASE("times at the ends of the clock do not overflow") {
    control::tombstone_table table(24h * 7);
    CHECK(table.add({"far", 100, wall_time::max()}, t0));
    CHECK(table.covers("far", 1, t0));
    CHECK(table.expire(t0) == 0);
    CHECK(table.add({"epoch", 100, wall_time{}}, wall_time{} + 1s));
    CHECK_FALSE(table.covers("epoch", 1, t0));
}

TEST_CASE("a retention of zero or less is refused") {
    CHECK_THROWS_AS(control::tombstone_table(0ms), std::invalid_argument);
    CHECK_THROWS_AS(control::tombstone_table(-1ms), std::invalid_argument);
}

TEST_CASE("threads: adds, checks and expiry at once see only tombstones that were added") {
    control::tombstone_table table(10s);
    std::atomic<bool> wrong{false};
    std::vector<std::thread> threads;
    for (int w = 0; w < 2; ++w)
        threads.emplace_back([&, w] {
            for (int i = 0; i < 20000; ++i) table.add({"j" + std::to_string(w * 20000 + i), 100, t0}, t0);
        });
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&] {
            for (int i = 0; i < 40000; ++i) {
                if (table.covers("never", 1, t0)) wrong = true;
                if (table.covers("j" + std::to_string(i), 100, t0)) wrong = true;  // same generation
            }
        });
    threads.emplace_back([&] {
        for (int i = 0; i < 200; ++i) table.expire(t0);  // nothing has expired
    });
    for (auto& t : threads) t.join();
    CHECK_FALSE(wrong.load());
    CHECK(table.size() == 40000);
    for (int i = 0; i < 40000; i += 997) CHECK(table.covers("j" + std::to_string(i), 99, t0));
    CHECK(table.expire(t0 + 10s) == 40000);
    CHECK(table.empty());
}
