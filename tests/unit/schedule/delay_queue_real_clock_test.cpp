// delay_queue on the real steady clock. These tests assert order and "never
// early" only, never speed: they must pass on a loaded machine. Each is
// bounded by a few tens of milliseconds of due times.
#include "tarry/schedule/delay_queue.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <random>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using std::chrono::steady_clock;

TEST_SUITE("delay_queue (real clock)") {

TEST_CASE("never early: every pop happens at or after the due time") {
    tarry::delay_queue<int> q;
    std::mt19937 rng(1);
    const auto start = steady_clock::now();
    constexpr int n = 400;
    for (int i = 0; i < n; ++i)
        q.push(int{i}, start + std::chrono::microseconds(rng() % 30000));

    std::atomic<int> taken{0};
    auto consume = [&] {
        int early = 0;
        while (auto it = q.pop()) {
            if (steady_clock::now() < it->due) ++early;
            if (++taken == n) q.close();
        }
        return early;
    };
    auto a = std::async(std::launch::async, consume);
    auto b = std::async(std::launch::async, consume);
    CHECK(a.get() == 0);
    CHECK(b.get() == 0);
    CHECK(taken == n);
}

TEST_CASE("single consumer sees due order, FIFO on ties") {
    tarry::delay_queue<int> q;
    const auto start = steady_clock::now();
    for (int i = 0; i < 200; ++i) q.push(int{i}, start + std::chrono::milliseconds(20 - (i / 10)));
    int last_group = 1 << 20;
    int last_in_group = -1;
    for (int k = 0; k < 200; ++k) {
        const auto it = q.pop();
        REQUIRE(it);
        CHECK(steady_clock::now() >= it->due);
        const int group = it->value / 10;  // due 20 - group ms: higher group first
        if (group != last_group) {
            CHECK(group < last_group);
            last_group = group;
            last_in_group = -1;
        }
        CHECK(it->value > last_in_group);
        last_in_group = it->value;
    }
}

TEST_CASE("a timeout is never early either") {
    tarry::delay_queue<int> q;
    const auto t0 = steady_clock::now();
    CHECK_FALSE(q.pop_for(20ms));
    CHECK(steady_clock::now() - t0 >= 20ms);
}

TEST_CASE("a push of an earlier item wakes a consumer sleeping on a later one") {
    tarry::delay_queue<int> q;
    q.push(2, steady_clock::now() + 1h);
    auto got = std::async(std::launch::async, [&] { return q.pop(); });
    std::this_thread::sleep_for(5ms);  // let it fall asleep (not needed for correctness)
    const auto due = steady_clock::now() + 10ms;
    q.push(1, due);
    // Without the wake-up the consumer would sleep an hour; 5 s is a bound,
    // not a speed assertion.
    REQUIRE(got.wait_for(5s) == std::future_status::ready);
    const auto it = got.get();
    REQUIRE(it);
    CHECK(it->value == 1);
    CHECK(steady_clock::now() >= due);
    q.close();
}

TEST_CASE("the timer passes from consumer to consumer (no item is stranded)") {
    // Two items due at the same instant, three sleeping consumers: after the
    // first is taken another sleeper must be told to time the second.
    tarry::delay_queue<int> q;
    std::vector<std::future<std::optional<tarry::due_item<int>>>> got;
    for (int i = 0; i < 3; ++i) got.push_back(std::async(std::launch::async, [&] { return q.pop(); }));
    const auto due = steady_clock::now() + 20ms;
    q.push(1, due);
    q.push(2, due);
    int done = 0;
    for (int spins = 0; spins < 150 && done < 2; ++spins) {
        done = 0;
        for (auto& g : got)
            if (g.wait_for(10ms) == std::future_status::ready) ++done;
    }
    CHECK(done == 2);
    q.close();
    int items = 0;
    for (auto& g : got)
        if (auto it = g.get()) {
            ++items;
            CHECK(steady_clock::now() >= it->due);
        }
    CHECK(items == 2);
}

}  // TEST_SUITE
