// delay_queue on a fake clock: exact, instant, no sleeps.
//
// A test that needs a consumer blocked inside pop() starts it with
// std::async, waits until the fake clock reports it asleep
// (wait_for_sleepers), then moves time and checks what came out.
#include "tarry/schedule/delay_queue.hpp"
#include "tarry/schedule/fake_clock.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

using namespace std::chrono_literals;
using tarry::fake_clock;
using tarry::push_result;

namespace {

using queue = tarry::delay_queue<int, fake_clock>;

template <class F>
auto in_thread(F f) {
    return std::async(std::launch::async, std::move(f));
}

template <class Fut>
bool still_waiting(Fut& f) {
    return f.wait_for(0s) == std::future_status::timeout;
}

// The consumer's result; if it does not come (a missed wake-up), the test
// fails and the queue is closed so the consumer thread can be joined.
template <class Fut, class Q>
auto result(Fut& f, Q& q) {
    if (f.wait_for(5s) != std::future_status::ready) {
        FAIL_CHECK("the consumer did not return");
        q.close();
    }
    return f.get();
}

}  // namespace

TEST_SUITE("delay_queue") {

TEST_CASE("never early: try_pop, fake clock, to the nanosecond") {
    fake_clock clk;
    queue q({}, clk);
    const auto due = clk.now() + 10s;
    REQUIRE(q.push(1, due) == push_result::ok);
    CHECK_FALSE(q.try_pop());
    clk.advance(10s - 1ns);
    CHECK_FALSE(q.try_pop());
    clk.advance(1ns);
    const auto it = q.try_pop();
    REQUIRE(it);
    CHECK(it->value == 1);
    CHECK(it->due == due);
    CHECK(q.empty());
}

TEST_CASE("never early: blocking pop wakes exactly at the due time") {
    fake_clock clk;
    queue q({}, clk);
    const auto due = clk.now() + 10s;
    q.push(7, due);
    auto got = in_thread([&] {
        auto it = q.pop();
        return std::make_pair(it, clk.now());
    });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(10s - 1ns);
    REQUIRE(clk.wait_for_sleepers(1));  // woke, found it not due, slept again
    CHECK(still_waiting(got));
    clk.advance(1ns);
    const auto [it, when] = result(got, q);
    REQUIRE(it);
    CHECK(it->value == 7);
    CHECK(when == due);
}

TEST_CASE("an item due in the past comes out at once") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() - 1h);
    const auto it = q.pop();
    REQUIRE(it);
    CHECK(it->value == 1);
}

TEST_CASE("earliest first; equal due times first-in first-out") {
    fake_clock clk;
    queue q({}, clk);
    std::mt19937 rng(42);
    struct pushed {
        int due_s;
        int id;
    };
    std::vector<pushed> all;
    for (int id = 0; id < 2000; ++id) {
        const int due_s = static_cast<int>(rng() % 20);  // many ties
        all.push_back({due_s, id});
        REQUIRE(q.push(int{id}, clk.now() + std::chrono::seconds(due_s)) == push_result::ok);
    }
    std::stable_sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.due_s < b.due_s; });
    clk.advance(20s);
    for (const auto& p : all) {
        const auto it = q.try_pop();
        REQUIRE(it);
        REQUIRE(it->value == p.id);
    }
    CHECK_FALSE(q.try_pop());
}

TEST_CASE("FIFO among equal due times holds across the wall-clock edge too") {
    fake_clock clk;
    queue q({}, clk);
    const auto due = clk.wall_now() + 3s;
    for (int i = 0; i < 100; ++i) q.push(int{i}, due);
    clk.advance(3s);
    for (int i = 0; i < 100; ++i) {
        const auto it = q.try_pop();
        REQUIRE(it);
        CHECK(it->value == i);
    }
}

TEST_CASE("wall-clock steps after the push neither advance nor delay a job") {
    fake_clock clk;
    queue q({}, clk);
    const auto steady_due = clk.now() + 10s;
    q.push(1, clk.wall_now() + 10s);
    CHECK(q.earliest_due() == steady_due);
    clk.step_wall(+1h);  // someone sets the date forward...
    CHECK_FALSE(q.try_pop());
    clk.step_wall(-2h);  // ...and back
    clk.advance(10s - 1ns);
    CHECK_FALSE(q.try_pop());
    clk.advance(1ns);
    CHECK(q.try_pop());
}

TEST_CASE("a push of an earlier item re-arms the sleeping consumer") {
    fake_clock clk;
    queue q({}, clk);
    q.push(100, clk.now() + 100s);
    auto got = in_thread([&] { return q.pop(); });
    REQUIRE(clk.wait_for_sleepers(1));
    const auto sleeps = clk.sleeps();
    q.push(1, clk.now() + 1s);
    // woken by the push (the fake clock wakes nobody else), it goes back to
    // sleep until the new earliest item is due
    REQUIRE(clk.wait_for_sleeps(sleeps + 1));
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(1s);
    const auto it = result(got, q);
    REQUIRE(it);
    CHECK(it->value == 1);
    CHECK(q.size() == 1);
}

TEST_CASE("a push of a later item does not disturb the consumer") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() + 1s);
    auto got = in_thread([&] { return q.pop(); });
    REQUIRE(clk.wait_for_sleepers(1));
    q.push(2, clk.now() + 5s);
    q.push(3, clk.now() + 1s);  // tie: behind 1
    CHECK(still_waiting(got));
    clk.advance(1s);
    REQUIRE(result(got, q)->value == 1);
    CHECK(q.try_pop()->value == 3);
}

TEST_CASE("several consumers: each due item goes to exactly one, none early") {
    fake_clock clk;
    queue q({}, clk);
    constexpr int consumers = 4;
    std::vector<std::future<std::optional<tarry::due_item<int>>>> got;
    for (int i = 0; i < consumers; ++i) got.push_back(in_thread([&] { return q.pop(); }));
    REQUIRE(clk.wait_for_sleepers(consumers));
    for (int i = 0; i < consumers; ++i) q.push(int{i}, clk.now() + 1s);
    REQUIRE(clk.wait_for_sleepers(consumers));
    for (auto& g : got) CHECK(still_waiting(g));
    clk.advance(1s);
    std::vector<int> seen;
    for (auto& g : got) {
        const auto it = result(g, q);
        REQUIRE(it);
        seen.push_back(it->value);
    }
    std::sort(seen.begin(), seen.end());
    CHECK(seen == std::vector<int>{0, 1, 2, 3});
}

TEST_CASE("spurious wake-ups never release an item early") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() + 10s);
    auto got = in_thread([&] { return q.pop(); });
    for (int i = 0; i < 50; ++i) {
        REQUIRE(clk.wait_for_sleepers(1));
        clk.wake_all();
    }
    REQUIRE(clk.wait_for_sleepers(1));
    CHECK(still_waiting(got));
    CHECK(q.size() == 1);
    clk.advance(10s);
    CHECK(result(got, q)->value == 1);
}

TEST_CASE("pop_for and pop_until time out on the queue's clock, exactly") {
    fake_clock clk;
    queue q({}, clk);
    auto got = in_thread([&] { return q.pop_for(5s); });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(5s - 1ns);
    REQUIRE(clk.wait_for_sleepers(1));
    CHECK(still_waiting(got));
    clk.advance(1ns);
    CHECK_FALSE(result(got, q));

    // an item due before the deadline is returned
    q.push(3, clk.now() + 1s);
    auto got2 = in_thread([&] { return q.pop_until(clk.now() + 2s); });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(1s);
    REQUIRE(result(got2, q)->value == 3);

    // an item due after the deadline is not
    q.push(4, clk.now() + 3s);
    auto got3 = in_thread([&] { return q.pop_until(clk.now() + 2s); });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(2s);
    CHECK_FALSE(result(got3, q));
    CHECK(q.size() == 1);

    CHECK_FALSE(q.pop_for(0s));
    CHECK_FALSE(q.pop_for(-1s));
    CHECK_FALSE(q.pop_for(std::chrono::hours::min()));
    CHECK_FALSE(q.pop_until(clk.now() - 1h));
}

TEST_CASE("a huge timeout does not overflow") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() + 1s);
    auto got = in_thread([&] { return q.pop_for(std::chrono::hours::max()); });
    REQUIRE(clk.wait_for_sleepers(1));
    clk.advance(1s);
    CHECK(result(got, q)->value == 1);
}

TEST_CASE("a stop request wakes a blocked pop, which returns empty") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() + 10s);
    std::stop_source stop;
    auto got = in_thread([&] { return q.pop(stop.get_token()); });
    REQUIRE(clk.wait_for_sleepers(1));
    stop.request_stop();
    CHECK_FALSE(result(got, q));
    CHECK(q.size() == 1);  // the item stays

    // already stopped: returns at once even with a due item
    clk.advance(10s);
    CHECK_FALSE(q.pop(stop.get_token()));
    CHECK_FALSE(q.pop_for(1s, stop.get_token()));
    // a token that can never stop behaves as pop()
    CHECK(q.pop(std::stop_token{})->value == 1);
}

TEST_CASE("a stop request wakes pop_until on an empty queue") {
    fake_clock clk;
    queue q({}, clk);
    std::stop_source stop;
    auto got = in_thread([&] { return q.pop_until(clk.now() + 1h, stop.get_token()); });
    REQUIRE(clk.wait_for_sleepers(1));
    stop.request_stop();
    CHECK_FALSE(result(got, q));
}

TEST_CASE("close wakes every waiter; pops after close return at once") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() + 10s);
    auto a = in_thread([&] { return q.pop(); });
    auto b = in_thread([&] { return q.pop_for(1h); });
    REQUIRE(clk.wait_for_sleepers(2));
    q.close();
    CHECK_FALSE(result(a, q));
    CHECK_FALSE(result(b, q));
    CHECK(q.closed());
    clk.advance(10s);
    CHECK_FALSE(q.pop());
    CHECK_FALSE(q.try_pop());
    int v = 2;
    CHECK(q.push(std::move(v), clk.now()) == push_result::closed);
    const auto rest = q.drain();
    REQUIRE(rest.size() == 1);
    CHECK(rest[0].value == 1);
    q.close();  // idempotent
}

TEST_CASE("remove by key takes every matching item at once, due or not") {
    struct job {
        int channel;
        int id;
    };
    fake_clock clk;
    tarry::delay_queue<job, fake_clock> q({}, clk);
    for (int id = 0; id < 30; ++id)
        q.push(job{id % 3, id}, clk.now() + std::chrono::seconds(30 - id), 10);
    CHECK(q.bytes() == 300);
    const auto gone = q.remove(1, &job::channel);
    REQUIRE(gone.size() == 10);
    for (std::size_t i = 0; i < gone.size(); ++i) {
        CHECK(gone[i].value.channel == 1);
        if (i > 0) CHECK(gone[i - 1].due <= gone[i].due);  // due order
    }
    CHECK(q.size() == 20);
    CHECK(q.bytes() == 200);
    clk.advance(1h);
    int n = 0;
    tarry::steady_time last{};
    while (auto it = q.try_pop()) {
        CHECK(it->value.channel != 1);
        CHECK(it->due >= last);
        last = it->due;
        ++n;
    }
    CHECK(n == 20);
    CHECK(q.remove(1, &job::channel).empty());
}

TEST_CASE("remove_if: a throwing predicate removes nothing") {
    fake_clock clk;
    queue q({}, clk);
    for (int i = 0; i < 10; ++i) q.push(int{i}, clk.now());
    CHECK_THROWS_AS(q.remove_if([](int v) {
        if (v == 5) throw std::runtime_error("boom");
        return v % 2 == 0;
    }),
                    std::runtime_error);
    CHECK(q.size() == 10);
    const auto evens = q.remove_if([](int v) { return v % 2 == 0; });
    CHECK(evens.size() == 5);
    CHECK(q.size() == 5);
    CHECK(q.stats().taken_out == 5);
}

TEST_CASE("count bound: full leaves the item with the caller") {
    fake_clock clk;
    tarry::delay_queue<std::unique_ptr<int>, fake_clock> q({.max_items = 3}, clk);
    for (int i = 0; i < 3; ++i) REQUIRE(q.push(std::make_unique<int>(i), clk.now() + 1s) == push_result::ok);
    auto extra = std::make_unique<int>(99);
    CHECK(q.push(std::move(extra), clk.now()) == push_result::full);
    REQUIRE(extra);  // not moved from
    CHECK(*extra == 99);
    CHECK(q.stats().refused == 1);
    CHECK(q.try_pop() == std::nullopt);
    clk.advance(1s);
    REQUIRE(q.try_pop());
    CHECK(q.push(std::move(extra), clk.now()) == push_result::ok);
}

TEST_CASE("byte bound: full, too_large, and room made by take_latest") {
    fake_clock clk;
    queue q({.max_bytes = 100}, clk);
    CHECK(q.push(1, clk.now() + 1s, 60) == push_result::ok);
    CHECK(q.push(2, clk.now() + 9s, 30) == push_result::ok);
    CHECK(q.push(3, clk.now() + 2s, 20) == push_result::full);
    CHECK(q.push(4, clk.now(), 101) == push_result::too_large);
    CHECK(q.bytes() == 90);
    CHECK(q.push(5, clk.now() + 3s, 10) == push_result::ok);  // exactly at the bound
    CHECK(q.bytes() == 100);
    // the consumer parks the job due last to make room for one due sooner
    CHECK(q.latest_due() == clk.now() + 9s);
    const auto parked = q.take_latest();
    REQUIRE(parked);
    CHECK(parked->value == 2);
    CHECK(parked->bytes == 30);
    CHECK(q.bytes() == 70);
    CHECK(q.push(3, clk.now() + 2s, 20) == push_result::ok);
}

TEST_CASE("take_latest: of equal due times the last pushed; then down to the earliest") {
    fake_clock clk;
    queue q({}, clk);
    CHECK_FALSE(q.take_latest());
    const auto t = clk.now() + 5s;
    q.push(1, t);
    q.push(2, t);
    q.push(0, clk.now() + 1s);
    q.push(3, t);
    CHECK(q.take_latest()->value == 3);
    CHECK(q.take_latest()->value == 2);
    CHECK(q.take_latest()->value == 1);
    CHECK(q.take_latest()->value == 0);
    CHECK(q.empty());
}

TEST_CASE("take_latest from under a sleeping consumer") {
    fake_clock clk;
    queue q({}, clk);
    q.push(1, clk.now() + 1s);
    auto got = in_thread([&] { return q.pop_for(10s); });
    REQUIRE(clk.wait_for_sleepers(1));
    CHECK(q.take_latest()->value == 1);
    clk.advance(1s);
    REQUIRE(clk.wait_for_sleepers(1));  // nothing to take: back to sleep
    CHECK(still_waiting(got));
    clk.advance(9s);
    CHECK_FALSE(result(got, q));
}

TEST_CASE("drain hands back everything in due order") {
    fake_clock clk;
    queue q({}, clk);
    for (int i = 9; i >= 0; --i) q.push(int{i}, clk.now() + std::chrono::seconds(i), 1);
    const auto all = q.drain();
    REQUIRE(all.size() == 10);
    for (int i = 0; i < 10; ++i) CHECK(all[static_cast<std::size_t>(i)].value == i);
    CHECK(q.empty());
    CHECK(q.bytes() == 0);
    CHECK_FALSE(q.earliest_due());
    CHECK(q.push(1, clk.now()) == push_result::ok);  // drain does not close
}

TEST_CASE("gauges and counters") {
    fake_clock clk;
    queue q({}, clk);
    CHECK(q.empty());
    CHECK_FALSE(q.earliest_due());
    CHECK_FALSE(q.latest_due());
    q.push(1, clk.now() + 2s, 5);
    q.push(2, clk.now() + 1s, 7);
    q.push(3, clk.now() + 3s, 11);
    CHECK(q.size() == 3);
    CHECK(q.bytes() == 23);
    CHECK(q.earliest_due() == clk.now() + 1s);
    CHECK(q.latest_due() == clk.now() + 3s);
    clk.advance(2s);
    q.try_pop();
    q.try_pop();
    const auto s = q.stats();
    CHECK(s.items == 1);
    CHECK(s.bytes == 11);
    CHECK(s.pushed == 3);
    CHECK(s.popped == 2);
    CHECK(s.refused == 0);
}

TEST_CASE("move-only payloads") {
    fake_clock clk;
    tarry::delay_queue<std::unique_ptr<std::string>, fake_clock> q({}, clk);
    q.push(std::make_unique<std::string>("hello"), clk.now());
    auto it = q.try_pop();
    REQUIRE(it);
    CHECK(*it->value == "hello");
}

TEST_CASE("many items: due order, FIFO ties, take_latest, remove") {
    fake_clock clk;
    queue q({}, clk);
    std::mt19937 rng(17);
    std::vector<std::pair<int, int>> pushed;  // (due s, id)
    for (int id = 0; id < 3000; ++id) {
        const int due_s = static_cast<int>(rng() % 50);
        pushed.emplace_back(due_s, id);
        q.push(int{id}, clk.now() + std::chrono::seconds(due_s));
    }
    std::stable_sort(pushed.begin(), pushed.end(), [](auto& a, auto& b) { return a.first < b.first; });
    CHECK(q.take_latest()->value == pushed.back().second);
    pushed.pop_back();
    const auto gone = q.remove_if([](int v) { return v % 7 == 0; });
    for (std::size_t i = 1; i < gone.size(); ++i) CHECK(gone[i - 1].due <= gone[i].due);
    std::erase_if(pushed, [](auto& p) { return p.second % 7 == 0; });
    CHECK(gone.size() + pushed.size() == 2999);
    clk.advance(50s);
    for (const auto& p : pushed) {
        const auto it = q.try_pop();
        REQUIRE(it);
        REQUIRE(it->value == p.second);
    }
    CHECK(q.empty());
}

}  // TEST_SUITE
