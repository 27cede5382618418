// fake_clock: time moves only on advance(); sleepers wake exactly then.
#include "tarry/schedule/fake_clock.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <mutex>
#include <stdexcept>

using namespace std::chrono_literals;
using tarry::fake_clock;

TEST_SUITE("fake_clock") {

TEST_CASE("time stands still until advanced; copies share it") {
    fake_clock clk;
    const fake_clock copy = clk;
    const auto t0 = clk.now();
    const auto w0 = clk.wall_now();
    CHECK(clk.now() == t0);
    clk.advance(1500ms);
    CHECK(copy.now() == t0 + 1500ms);
    CHECK(copy.wall_now() == w0 + 1500ms);
    CHECK_THROWS_AS(clk.advance(-1ns), std::invalid_argument);
    CHECK(clk.now() == t0 + 1500ms);
}

TEST_CASE("a wall-clock step leaves steady time alone") {
    fake_clock clk;
    const auto t0 = clk.now();
    const auto w0 = clk.wall_now();
    clk.step_wall(-1h);
    CHECK(clk.wall_now() == w0 - 1h);
    CHECK(clk.now() == t0);
}

TEST_CASE("to_steady converts once and saturates") {
    fake_clock clk;
    CHECK(tarry::to_steady(clk, clk.wall_now() + 5s) == clk.now() + 5s);
    CHECK(tarry::to_steady(clk, clk.wall_now() - 5s) == clk.now() - 5s);
    CHECK(tarry::to_steady(clk, tarry::wall_time::max()) > clk.now() + std::chrono::hours(24 * 365 * 200));
    const fake_clock late(tarry::steady_time::max() - 1h, clk.wall_now());
    CHECK(tarry::to_steady(late, late.wall_now() + 2h) == tarry::steady_time::max());
    const fake_clock early(tarry::steady_time::min() + 1h, clk.wall_now());
    CHECK(tarry::to_steady(early, early.wall_now() - 2h) == tarry::steady_time::min());
    CHECK(tarry::to_steady(early, tarry::wall_time::min()) == tarry::steady_time::min());
}

TEST_CASE("wait_until returns at once when the deadline has passed") {
    fake_clock clk;
    fake_clock::condition_variable cv(clk);
    std::mutex m;
    std::unique_lock lock(m);
    cv.wait_until(lock, clk.now());  // would hang if it slept
    cv.wait_until(lock, clk.now() - 1s);
    CHECK(lock.owns_lock());
}

TEST_CASE("a sleeper wakes exactly when advance() reaches its deadline") {
    fake_clock clk;
    fake_clock::condition_variable cv(clk);
    std::mutex m;
    const auto deadline = clk.now() + 10s;
    auto waiter = std::async(std::launch::async, [&] {
        std::unique_lock lock(m);
        int wakes = 0;
        while (clk.now() < deadline) {
            cv.wait_until(lock, deadline);
            ++wakes;
        }
        return wakes;
    });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(10s - 1ns);
    CHECK(clk.sleepers() == 1);  // not woken: its deadline has not come
    CHECK(clk.sleeps() == 1);
    CHECK(waiter.wait_for(0s) == std::future_status::timeout);
    clk.advance(1ns);
    CHECK(waiter.get() == 1);
    CHECK(clk.sleepers() == 0);
}

TEST_CASE("notify_one wakes the longest sleeper") {
    fake_clock clk;
    fake_clock::condition_variable cv(clk);
    std::mutex m;
    int turn = 0;
    auto sleeper = [&](int me) {
        return std::async(std::launch::async, [&, me] {
            std::unique_lock lock(m);
            cv.wait(lock);
            return turn++ == me;
        });
    };
    auto first = sleeper(0);
    REQUIRE(clk.wait_for_sleepers(1));
    auto second = sleeper(1);
    REQUIRE(clk.wait_for_sleepers(2));
    cv.notify_one();
    CHECK(first.get());
    CHECK(clk.sleepers() == 1);
    cv.notify_one();
    CHECK(second.get());
}

TEST_CASE("notify wakes a plain wait; wake_all is a spurious wake-up") {
    fake_clock clk;
    fake_clock::condition_variable cv(clk);
    std::mutex m;
    bool ready = false;
    auto waiter = std::async(std::launch::async, [&] {
        std::unique_lock lock(m);
        int wakes = 0;
        while (!ready) {
            cv.wait(lock);
            ++wakes;
        }
        return wakes;
    });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.wake_all();
    REQUIRE(clk.wait_for_sleeps(2));
    REQUIRE(clk.wait_for_sleepers(1));
    {
        std::lock_guard lock(m);
        ready = true;
    }
    cv.notify_one();
    CHECK(waiter.get() == 2);
}

}  // TEST_SUITE
