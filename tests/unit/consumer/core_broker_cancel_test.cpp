// The broker cancels a consumer (basic.cancel from the server): when its
// queue is deleted (every version) and, on RabbitMQ 4.3, when a delivery on
// a quorum queue overstays the consumer timeout. The channel stays open, so
// nothing the lane holds goes back to the queue (each return would count
// toward the delivery limit); another lane consumes after a pause. The core
// on a fake clock (core_harness.hpp), with the broker's input scripted.
#include "core_harness.hpp"

using namespace core_test;

namespace {
std::vector<connection_event> reported(harness& h, connection_event::kind k) {
    std::vector<connection_event> out;
    for (auto& r : h.take_if<action::report>([k](const action::report& r) { return r.event.what == k; }))
        out.push_back(std::move(r.event));
    return out;
}
}  // namespace

TEST_CASE("fault: a broker's basic.cancel keeps the lane's 100 held jobs; they run and are acked on it") {
    harness h(lanes_options(1000, 4));
    const auto gen = h.subscribe();
    for (std::uint64_t tag = 1; tag <= 100; ++tag) h.deliver(0, gen, tag, 1s);
    REQUIRE(h.queue.size() == 100);
    h.take<action::start_lane>();

    h.core.consumer_cancelled(0, gen, "lane 0: the broker cancelled the consumer", h.now());
    // Nothing given back, nothing dropped, the channel not closed; the
    // consumer tag cancelled by us too (4.3 would put it back in service).
    const auto cancels = h.take<action::cancel_lane>();
    REQUIRE(cancels.size() == 1);
    CHECK(cancels[0].lane == 0);
    CHECK(cancels[0].incarnation == gen);
    CHECK(cancels[0].consumer_tag == "ctag-0");
    CHECK(h.take<action::close_lane>().empty());
    CHECK(h.take<action::sweep>().empty());
    CHECK(h.take<action::nack>().empty());
    CHECK(h.queue.size() == 100);
    CHECK(h.counters.dropped == 0);
    CHECK(h.counters.channel_losses == 0);
    CHECK(h.core.lanes().current(0, gen));
    CHECK_FALSE(h.core.consuming());
    const auto ev = reported(h, connection_event::kind::consumer_cancelled);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].delay == 200ms);
    CHECK(ev[0].text().find("consumer cancelled by the broker") != std::string::npos);

    // After the pause: subscribe again (declaring the queue again when it
    // is ours), then consume on another lane.
    h.advance(199ms);
    CHECK(h.take<action::subscribe>().empty());
    h.advance(1ms);
    REQUIRE(h.take<action::subscribe>().size() == 1);
    h.core.subscribed();
    auto starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    CHECK(starts[0].lane != 0);
    const auto g1 = h.open_lane(starts[0].lane);
    CHECK(h.core.consuming());
    h.deliver(starts[0].lane, g1, 1, std::nullopt);

    // The old deliveries are settled on their own channel as usual.
    h.advance(1s);
    std::size_t acked_on_0 = 0;
    while (auto j = h.pop()) {
        const auto lane = j->lane;
        h.finish(std::move(*j), job_outcome::success());
        for (const auto& a : h.take<action::ack>()) {
            if (a.lane == 0) {
                CHECK(a.incarnation == gen);
                ++acked_on_0;
            }
            CHECK(a.lane == lane);
        }
    }
    CHECK(acked_on_0 == 100);
    CHECK(h.counters.succeeded == 101);
    CHECK(h.core.lanes()[0].unsettled == 0);
}

TEST_CASE("broker cancels in a row back off: 200 ms doubling; a delivery starts the count again") {
    harness h(lanes_options(1000, 4));
    auto gen = h.subscribe();
    std::size_t lane = 0;
    std::vector<std::chrono::milliseconds> delays;
    for (int i = 0; i < 4; ++i) {
        h.core.consumer_cancelled(lane, gen, "queue deleted", h.now());
        const auto ev = reported(h, connection_event::kind::consumer_cancelled);
        REQUIRE(ev.size() == 1);
        delays.push_back(ev[0].delay);
        h.advance(ev[0].delay);
        REQUIRE(h.take<action::subscribe>().size() == 1);
        h.core.subscribed();
        auto starts = h.take<action::start_lane>();
        REQUIRE(starts.size() == 1);
        CHECK(starts[0].lane != lane);  // another lane than the one cancelled
        lane = starts[0].lane;
        gen = h.open_lane(lane);
    }
    CHECK(delays == std::vector<std::chrono::milliseconds>{200ms, 400ms, 800ms, 1600ms});
    h.deliver(lane, gen, 1, 1s);
    h.core.consumer_cancelled(lane, gen, "queue deleted", h.now());
    const auto ev = reported(h, connection_event::kind::consumer_cancelled);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].delay == 200ms);
}

TEST_CASE("a broker's basic.cancel reported twice, for a stale incarnation, or crossing our own cancel does nothing more") {
    harness h(lanes_options(1000, 4));
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 1s);
    h.core.consumer_cancelled(0, gen + 7, "stale", h.now());
    CHECK(reported(h, connection_event::kind::consumer_cancelled).empty());
    CHECK(h.core.consuming());
    h.core.consumer_cancelled(0, gen, "deleted", h.now());
    h.core.consumer_cancelled(0, gen, "deleted", h.now());
    CHECK(reported(h, connection_event::kind::consumer_cancelled).size() == 1);

    // stop() cancels every lane; a broker's cancel crossing it is no news.
    harness s(lanes_options(1000, 4));
    const auto g = s.subscribe();
    s.deliver(0, g, 1, 1s);
    s.core.stop(s.now());
    REQUIRE(s.take<action::cancel_lane>().size() == 1);
    s.core.consumer_cancelled(0, g, "deleted", s.now());
    CHECK(reported(s, connection_event::kind::consumer_cancelled).empty());
    s.advance(500ms);
    CHECK(s.take<action::subscribe>().empty());
    CHECK(s.take<action::nack>().empty());  // held until stop gives it back
}

TEST_CASE("a broker's basic.cancel before its consume-ok was handled leaves the lane idle") {
    harness h(lanes_options(1000, 4));
    h.core.subscribed();
    auto starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    const auto gen = h.core.lane_opened(starts[0].lane);
    h.core.consumer_cancelled(starts[0].lane, gen, "deleted", h.now());
    CHECK(reported(h, connection_event::kind::consumer_cancelled).size() == 1);
    h.core.lane_consuming(starts[0].lane, gen, "ctag");  // late: its consumer is gone
    CHECK_FALSE(h.core.consuming());
    const auto cancels = h.take<action::cancel_lane>();
    REQUIRE(cancels.size() == 1);
    CHECK(cancels[0].consumer_tag == "ctag");
    h.advance(200ms);
    CHECK(h.take<action::subscribe>().size() == 1);
}
