// Parking through a delay cascade on the real broker
// (subscription_options::parking_strategy, docs/cascades.md "Parking"):
// the consumer declares the cascade and its work queue's delivery queue,
// jobs due beyond the hold horizon travel through the cascade back to the
// work queue and run at their due time, never early; no wait ladder is
// declared.
#include "consumer_fixture.hpp"

#include "tarry/parking/delay_cascade.hpp"

using namespace consumer_it;

TEST_CASE("cascade parking: far jobs come back through the cascade and run on time, once each") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("cascade-park"));
    o.hold_horizon = 2s;
    tarry::parking::cascade_spec s;
    s.levels = 10;
    s.unit = 100ms;  // up to 102.3 s
    s.prefix = unique_name("park-cascade");
    o.parking_strategy = s;
    const tarry::parking::delay_cascade cascade(s);
    {
        running_consumer rc(url, o);
        const auto now = sys::now();
        std::vector<sys::time_point> dues;
        for (int i = 0; i < 20; ++i) dues.push_back(now + 3s + i * 150ms);
        const auto due_us = publish_many(url, o.queue, "far", dues);
        REQUIRE(rc.log.wait_count(kind::run, dues.size(), 15s));
        std::this_thread::sleep_for(300ms);
        CHECK(rc.log.count(kind::parked) >= dues.size());
        CHECK(rc.log.count(kind::run) == dues.size());
        for (const auto& e : rc.log.of(kind::run)) {
            const auto late = lateness_ms(e);
            CHECK_MESSAGE(late >= 0, e.id << " ran " << -late << " ms early");
            CHECK_MESSAGE(late < 100, e.id << " ran " << late << " ms late");
            CHECK(due_us.contains(e.id));
        }
        CHECK(rc.worker.wait_queues().empty());
    }
    // No wait ladder was declared; the cascade was.
    auto ch = c.open_channel();
    const tarry::parking::wait_ladder ladder(o.queue, o.effective_min_park_ttl(), o.hold_horizon);
    auto [ec, info] = wait(ch.async_declare_queue(passive_queue(ladder.queues().front().name), use_future));
    CHECK(ec);  // 404: never declared
    ch = c.open_channel();
    const auto t = cascade.topology();
    for (const auto& q : t.queues) wait(ch.async_delete_queue(q.name, {}, use_future));
    wait(ch.async_delete_queue(cascade.delivery({"", o.queue}).queues.front().name, {}, use_future));
    for (const auto& x : t.exchanges) wait(ch.async_delete_exchange(x.name, {}, use_future));
    wait(ch.async_delete_queue(o.queue, {}, use_future));
    wait(ch.async_delete_queue(o.dead_letter_queue_name(), {}, use_future));
}
