// delay_queue's ready path (push_ready): the fast path for items already
// due, on a fake clock.
#include "tarry/schedule/delay_queue.hpp"
#include "tarry/schedule/fake_clock.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>

using namespace std::chrono_literals;
using tarry::fake_clock;
using tarry::push_result;

namespace {
using queue = tarry::delay_queue<int, fake_clock>;
}

TEST_SUITE("delay_queue ready path") {

TEST_CASE("ready items leave in arrival order, before held items not yet due") {
    fake_clock clk;
    queue q({}, clk);
    REQUIRE(q.push(100, clk.now() + 1s) == push_result::ok);
    REQUIRE(q.push_ready(1, clk.now()) == push_result::ok);
    REQUIRE(q.push_ready(2, clk.now() - 5s) == push_result::ok);  // arrival order, not due order
    CHECK(q.size() == 3);
    CHECK(q.try_pop()->value == 1);
    CHECK(q.try_pop()->value == 2);
    CHECK_FALSE(q.try_pop());  // the held item is not due
    clk.advance(1s);
    CHECK(q.try_pop()->value == 100);
    CHECK(q.empty());
    CHECK(q.stats().pushed == 3);
    CHECK(q.stats().popped == 3);
}

TEST_CASE("a held item due before the oldest ready item leaves first") {
    fake_clock clk;
    queue q({}, clk);
    const auto t0 = clk.now();
    q.push(10, t0 + 1s);
    clk.advance(2s);
    q.push_ready(20, clk.now());                // became due at t0+2s
    CHECK(q.try_pop()->value == 10);            // due at t0+1s: overdue longer
    CHECK(q.try_pop()->value == 20);
}

TEST_CASE("a ready item's due time is never in the future") {
    fake_clock clk;
    queue q({}, clk);
    q.push_ready(1, clk.now() + 1h);
    const auto it = q.try_pop();
    REQUIRE(it);
    CHECK(it->due == clk.now());
}

TEST_CASE("push_ready wakes a consumer sleeping for a later held item") {
    fake_clock clk;
    queue q({}, clk);
    q.push(5, clk.now() + 1h);
    auto got = std::async(std::launch::async, [&] { return q.pop(); });
    REQUIRE(clk.wait_for_sleepers(1));
    q.push_ready(6, clk.now());
    REQUIRE(got.wait_for(5s) == std::future_status::ready);
    const auto it = got.get();
    REQUIRE(it);
    CHECK(it->value == 6);
    CHECK(q.size() == 1);
}

TEST_CASE("push_ready_quiet wakes nobody until wake_ready, yet the item is there at once") {
    fake_clock clk;
    queue q({}, clk);
    q.push(5, clk.now() + 1h);
    auto got = std::async(std::launch::async, [&] { return q.pop(); });
    REQUIRE(clk.wait_for_sleepers(1));
    REQUIRE(q.push_ready_quiet(6, clk.now()) == push_result::ok);
    REQUIRE(q.push_ready_quiet(7, clk.now()) == push_result::ok);
    CHECK(q.size() == 3);
    CHECK(got.wait_for(100ms) == std::future_status::timeout);  // still asleep for the 1 h item
    q.wake_ready();
    REQUIRE(got.wait_for(5s) == std::future_status::ready);
    const auto it = got.get();
    REQUIRE(it);
    CHECK(it->value == 6);
    CHECK(q.try_pop()->value == 7);  // a pop that was not asleep finds it without a wake
    q.wake_ready();                  // nothing announced: a no-op
    CHECK(q.size() == 1);
    CHECK(q.stats().pushed == 3);
}

TEST_CASE("wake_ready wakes one sleeper per quiet item, not more") {
    fake_clock clk;
    queue q({}, clk);
    q.push(5, clk.now() + 1h);
    auto first = std::async(std::launch::async, [&] { return q.pop(); });
    auto second = std::async(std::launch::async, [&] { return q.pop(); });
    REQUIRE(clk.wait_for_sleepers(1));
    // Both wait (one leads on the clock, one on the condition); give the second time to block.
    std::this_thread::sleep_for(50ms);
    q.push_ready_quiet(6, clk.now());
    q.wake_ready();
    // Exactly one of them gets the item; the other goes back to sleep.
    const auto one_done = [&] {
        for (int i = 0; i < 500; ++i) {
            if (first.wait_for(10ms) == std::future_status::ready) return &first;
            if (second.wait_for(0ms) == std::future_status::ready) return &second;
        }
        return static_cast<std::future<std::optional<queue::item>>*>(nullptr);
    }();
    REQUIRE(one_done != nullptr);
    CHECK(one_done->get()->value == 6);
    auto& other = one_done == &first ? second : first;
    CHECK(other.wait_for(100ms) == std::future_status::timeout);
    clk.advance(1h);  // the held item is due: the other one takes it
    REQUIRE(other.wait_for(5s) == std::future_status::ready);
    CHECK(other.get()->value == 5);
}

TEST_CASE("ready items count against the bounds and are seen by take_latest, remove and drain") {
    fake_clock clk;
    queue q({.max_items = 3, .max_bytes = 100}, clk);
    CHECK(q.push_ready(1, clk.now(), 60) == push_result::ok);
    CHECK(q.push_ready(2, clk.now(), 50) == push_result::full);    // bytes
    CHECK(q.push_ready(2, clk.now(), 200) == push_result::too_large);
    CHECK(q.push(3, clk.now() + 1s, 10) == push_result::ok);
    CHECK(q.push_ready(4, clk.now(), 10) == push_result::ok);
    CHECK(q.push(5, clk.now() + 2s, 0) == push_result::full);      // count
    CHECK(q.bytes() == 80);
    // take_latest prefers held items; with none left, the newest ready one.
    CHECK(q.take_latest()->value == 3);
    CHECK(q.take_latest()->value == 4);
    q.push_ready(7, clk.now(), 1);
    q.push(8, clk.now() + 1s, 1);
    const auto odd = q.remove_if([](int v) { return v % 2 == 1; });
    REQUIRE(odd.size() == 2);
    CHECK(odd[0].value == 1);
    CHECK(odd[1].value == 7);
    const auto rest = q.drain();
    REQUIRE(rest.size() == 1);
    CHECK(rest[0].value == 8);
    CHECK(q.bytes() == 0);
    CHECK(q.empty());
}

TEST_CASE("closed: push_ready is refused") {
    fake_clock clk;
    queue q({}, clk);
    q.close();
    CHECK(q.push_ready(1, clk.now()) == push_result::closed);
}

}
