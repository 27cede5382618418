// Parking through a delay cascade (subscription_options::parking_strategy,
// docs/cascades.md "Parking"), on the consumer core with a fake clock: the
// parked copy enters the cascade with a route that brings it back to the
// work queue before it is due (rounded down, at least park_margin early),
// capped at the cascade's longest delay; a job due too soon for one unit
// is held; the delivery is acked only once the copy is confirmed.
#include "core_harness.hpp"

#include "tarry/parking/delay_cascade.hpp"

using namespace core_test;

namespace {

subscription_options cascade_options(unsigned levels) {
    subscription_options o = small_options();  // hold_horizon 2 s, park_margin 250 ms
    o.broker_consumer_timeout = 60s;
    parking::cascade_spec s;
    s.levels = levels;
    s.unit = 100ms;
    s.prefix = "delays";
    o.parking_strategy = s;
    return o;
}

// The delay a route's key encodes (its digits after the destination word).
std::int64_t units_of(const std::string& key) {
    std::int64_t units = 0;
    std::size_t at = key.find('.');
    while (at != std::string::npos) {
        const std::size_t next = key.find('.', at + 1);
        units = units * 2 + std::stoi(key.substr(at + 1, next == std::string::npos ? next : next - at - 1));
        at = next;
    }
    return units;
}

}  // namespace

TEST_CASE("cascade parking: a far job's copy enters the cascade and comes back before it is due") {
    harness h(cascade_options(10));
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 60s, "far");
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].exchange == "delays.9");  // the top level's exchange
    const std::string word = parking::delay_cascade::destination_word({"", "jobs"});
    CHECK(ps[0].routing_key.rfind(word + ".", 0) == 0);
    // 60 s - 250 ms margin = 597.5 units of 100 ms, rounded down: back 59.7 s
    // from now, 300 ms before it is due.
    CHECK(units_of(ps[0].routing_key) == 597);
    CHECK(h.take<action::ack>().empty());  // not before the copy is confirmed
    h.core.copy_confirmed(ps[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.counters.parked == 1);
}

TEST_CASE("cascade parking: beyond the cascade's longest delay, the copy waits that long and is parked again") {
    harness h(cascade_options(6));  // 63 units: 6.3 s
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 1h, "very far");
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(units_of(ps[0].routing_key) == 63);
}

TEST_CASE("cascade parking: with the store full, a job due sooner than min_park_ttl is held, not parked") {
    subscription_options o = cascade_options(10);
    o.max_held = 1;
    harness h(o);
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 1200ms, "held");
    // The store is full: "held" gives way, but 950 ms of room is less than
    // min_park_ttl (1 s).
    h.deliver(0, gen, 2, 1100ms, "sooner");
    CHECK(h.take<action::publish>().empty());
    CHECK(h.queue.size() == 2);
}

TEST_CASE("cascade parking: the options check the cascade's spec") {
    subscription_options o = cascade_options(10);
    o.parking_strategy->levels = 0;
    const auto problem = validate(o);
    REQUIRE(problem);
    CHECK(problem->message.find("parking_strategy: delay cascade: the levels") != std::string::npos);
}
