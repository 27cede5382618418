// The hand-off of lifecycle events: bounded (an event beyond the bound is
// dropped and counted, never waited for), order kept, a place freed only
// when its event is settled, and closing drains what is queued.
#include "event_outbox.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace tarry;
using namespace tarry::detail;

namespace {
job_event event_of(std::string id) {
    return {job_event::kind::run, std::move(id), {}, {}, 1, {}, {}, false};
}
}  // namespace

TEST_CASE("outbox: full at its bound, the rest dropped and counted") {
    event_outbox box(3);
    for (int i = 0; i < 5; ++i) CHECK(box.offer(event_of(std::to_string(i))) == (i < 3));
    CHECK(box.dropped() == 2);
    CHECK(box.waiting() == 3);
    const auto taken = box.take();
    REQUIRE(taken.size() == 3);
    CHECK(taken[0].id == "0");
    CHECK(taken[2].id == "2");
    // Taken is still waiting until settled: the bound covers events in flight.
    CHECK_FALSE(box.offer(event_of("5")));
    CHECK(box.dropped() == 3);
    box.settled(2, true);
    box.settled(1, false);
    CHECK(box.published() == 2);
    CHECK(box.dropped() == 4);
    CHECK(box.waiting() == 0);
    CHECK(box.offer(event_of("6")));
}

TEST_CASE("outbox: closed, take() drains, then returns nothing; offers are dropped") {
    event_outbox box(10);
    CHECK(box.offer(event_of("a")));
    box.close();
    CHECK_FALSE(box.offer(event_of("b")));
    CHECK(box.dropped() == 1);
    CHECK(box.take().size() == 1);
    CHECK(box.take().empty());
}

TEST_CASE("outbox: many offering threads, one taker; each event once, in order per thread, never blocked") {
    constexpr int producers = 4, each = 20000;
    event_outbox box(1000);
    std::vector<std::vector<int>> seen(producers);
    std::thread taker([&] {
        for (;;) {
            auto batch = box.take();
            if (batch.empty()) return;
            for (const auto& e : batch) seen[e.attempt].push_back(std::stoi(e.id));
            box.settled(batch.size(), true);
        }
    });
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            for (int i = 0; i < each; ++i) {
                auto e = event_of(std::to_string(i));
                e.attempt = static_cast<std::uint32_t>(p);
                box.offer(e);
            }
        });
    for (auto& t : threads) t.join();
    box.close();
    taker.join();
    std::uint64_t got = 0;
    for (const auto& s : seen) {
        got += s.size();
        for (std::size_t i = 1; i < s.size(); ++i) CHECK(s[i - 1] < s[i]);
    }
    CHECK(got == box.published());
    CHECK(box.published() + box.dropped() == std::uint64_t{producers} * each);
    CHECK(box.waiting() == 0);
}

TEST_CASE("outbox: take with a linger gathers the events offered meanwhile; close cuts the linger short") {
    tarry::detail::event_outbox box(100);
    const tarry::job_event e{tarry::job_event::kind::run, "a", {}, {}, 1, {}, {}, false};
    REQUIRE(box.offer(e));
    std::thread late([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        box.offer(e);
    });
    const auto gathered = box.take(std::chrono::milliseconds(500));
    late.join();
    CHECK(gathered.size() == 2);  // the one offered 20 ms later came along

    REQUIRE(box.offer(e));
    const auto started = std::chrono::steady_clock::now();
    std::thread closer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        box.close();
    });
    CHECK(box.take(std::chrono::seconds(30)).size() == 1);
    closer.join();
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(10));
}
