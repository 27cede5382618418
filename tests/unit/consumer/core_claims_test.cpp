// Run claims in the consumer core, on a fake clock (docs/periodic.md, "Run
// claims"): a copy of a periodic occurrence is claimed when it is admitted,
// runs only when its own claim came first, is acked unrun when another
// copy's did, and waits while no claim of its occurrence was read. Each
// crash that leaves two copies of one occurrence ends with one run.
#include "core_harness.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/periodic/occurrence.hpp"

using namespace core_test;

namespace {

using namespace std::chrono;

struct occurrence {
    wall_time nominal;
    std::string copy;
    std::string id() const { return "tick@" + periodic::format_nominal(nominal); }
};

/// A nominal time of `every 1000ms` `ahead` from now (whole seconds).
occurrence next_occurrence(harness& h, seconds ahead, std::string copy) {
    return {floor<seconds>(h.clock.wall_now()) + ahead, std::move(copy)};
}

void deliver(harness& h, std::uint32_t gen, std::uint64_t tag, const occurrence& o, std::uint32_t attempt = 1) {
    amqp::delivery d;
    d.delivery_tag = tag;
    contract::occurrence_headers headers{"tick", periodic::format_nominal(o.nominal), "every 1000ms", 1, o.copy};
    contract::write_occurrence_copy(d.msg.properties, headers, o.nominal, 500, h.clock.wall_now());
    if (attempt > 1) d.msg.properties.headers->set(std::string(contract::attempt_header), std::int64_t{attempt});
    d.msg.body = {'b'};
    h.core.delivery(0, gen, std::move(d), h.now());
}

/// The worker's answer for the job due now: `what` (not run).
void hand_back(harness& h, finished_job::result what) {
    auto j = h.pop();
    REQUIRE(j);
    h.core.finished({std::move(*j), what, std::nullopt, h.clock.wall_now()}, h.now());
}

/// Claims in force; copy `copy` of the occurrence due a second from now is
/// delivered (tag 1), held, and handed back by a worker as `what` when it
/// falls due. Its occurrence and its lane's incarnation.
std::pair<occurrence, std::uint32_t> fall_due(harness& h, const std::string& copy, finished_job::result what) {
    h.claims.enforced = true;
    const auto gen = h.subscribe();
    const auto o = next_occurrence(h, 1s, copy);
    deliver(h, gen, 1, o);
    h.advance(o.nominal - h.clock.wall_now());
    hand_back(h, what);
    return {o, gen};
}

}  // namespace

TEST_CASE("an occurrence admitted to be held is claimed at once, with its occurrence id and copy id") {
    harness h;
    h.claims.enforced = true;
    const auto gen = h.subscribe();
    const auto o = next_occurrence(h, 1s, "c1");
    deliver(h, gen, 1, o);
    const auto claims = h.take<action::claim>();
    REQUIRE(claims.size() == 1);
    CHECK(claims[0].entry.occurrence_id == o.id());
    CHECK(claims[0].entry.schedule_id == "tick");
    CHECK(claims[0].entry.nominal == periodic::format_nominal(o.nominal));
    CHECK(claims[0].entry.copy == "c1");
    CHECK(claims[0].entry.written == h.clock.wall_now());
    CHECK(h.store.size() == 1);  // held as any job
}

TEST_CASE("before claims are in force an occurrence is claimed all the same, and runs when it falls due") {
    // A new schedule's first occurrence can arrive before the consumer has
    // attached to the new stream: its claim is there when it reads it.
    harness h;
    const auto gen = h.subscribe();
    const auto o = next_occurrence(h, 1s, "c1");
    deliver(h, gen, 1, o);
    CHECK(h.take<action::claim>().size() == 1);
    h.advance(o.nominal - h.clock.wall_now());
    auto j = h.pop();
    REQUIRE(j);  // the worker runs it: claims not in force
    h.finish(std::move(*j), job_outcome::success());
    CHECK(h.take<action::publish>().size() == 1);  // its successor
}

TEST_CASE("no claim: a retry of an occurrence, a job that is no occurrence, a parked one, no claim oracle") {
    harness h;
    const auto gen = h.subscribe();
    h.claims.enforced = true;
    deliver(h, gen, 2, next_occurrence(h, 1s, "c2"), 2);  // attempt 2
    h.deliver(0, gen, 3, 500ms, "tick@notanoccurrence");  // '@', but no occurrence headers
    deliver(h, gen, 4, next_occurrence(h, 10s, "c4"));    // beyond the 2 s hold horizon: parked
    CHECK(h.take<action::claim>().empty());
    CHECK(h.counters.parked == 0);  // not yet confirmed
    CHECK(h.take<action::publish>().size() == 1);  // the parked copy; it claims when it comes back

    // A core without a claim oracle (read_control_stream off) claims nothing.
    fake_clock clock;
    delay_queue<held_job, fake_clock> queue({}, clock);
    delay_queue_store<fake_clock> store(queue);
    core_counters counters;
    const auto options = small_options();
    consumer_core core(options, store, counters, retry::make_random_source(7), clock.now());
    core.subscribed();
    std::vector<core_action> out;
    core.take_actions(out);
    REQUIRE(out.size() == 1);
    const auto lane = std::get<action::start_lane>(out[0]).lane;
    const auto g = core.lane_opened(lane);
    core.lane_consuming(lane, g, "ctag");
    amqp::delivery d;
    d.delivery_tag = 1;
    const auto nominal = floor<seconds>(clock.wall_now()) + 1s;
    contract::write_occurrence_copy(d.msg.properties, {"tick", periodic::format_nominal(nominal), "every 1000ms", 1, "c"},
                                    nominal, 500, clock.wall_now());
    core.delivery(lane, g, std::move(d), {clock.now(), clock.wall_now()});
    core.take_actions(out);
    CHECK(std::none_of(out.begin(), out.end(), [](const core_action& a) { return std::holds_alternative<action::claim>(a); }));
    CHECK(store.size() == 1);
}

TEST_CASE("fault: a copy admitted after another copy's claim was read is acked unrun: no claim, no successor") {
    harness h;
    h.claims.enforced = true;
    const auto gen = h.subscribe();
    const auto o = next_occurrence(h, 1s, "c2");
    h.claims.winners[o.id()] = "c1";
    deliver(h, gen, 7, o);
    const auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == 7);
    CHECK(h.store.size() == 0);
    CHECK(h.take<action::claim>().empty());
    CHECK(h.take<action::publish>().empty());
    const auto dedup = h.events(job_event::kind::deduplicated);
    REQUIRE(dedup.size() == 1);
    CHECK(dedup[0].id == o.id());
    CHECK(!dedup[0].reason.empty());
    CHECK(h.counters.deduplicated == 1);
    CHECK(h.core.lanes()[0].unsettled == 0);
}

TEST_CASE("fault: a copy that falls due before any claim was read waits unacked; its own claim read, it runs") {
    harness h;
    const auto o = fall_due(h, "c1", finished_job::result::unclaimed).first;  // the worker found no claim
    CHECK(h.core.awaiting_claims() == 1);
    CHECK(h.take<action::claim>().size() == 2);  // at admission, and again at once
    CHECK(h.take<action::ack>().empty());
    CHECK(h.take<action::nack>().empty());
    CHECK_FALSE(h.pop());
    // Other claims read meanwhile change nothing.
    h.claims.winners["tick@1"] = "x";
    h.core.claims_read(h.now());
    CHECK(h.core.awaiting_claims() == 1);
    h.advance(5ms);
    h.claims.winners[o.id()] = "c1";
    h.core.claims_read(h.now());
    CHECK(h.core.awaiting_claims() == 0);
    REQUIRE_FALSE(h.take<action::wake_workers>().empty());
    auto j = h.pop();
    REQUIRE(j);
    CHECK(j->delivery_tag == 1);
    CHECK(j->due == o.nominal);  // its lateness counts from its due time
}

TEST_CASE("fault: a copy waiting for its claim whose occurrence another copy won is acked unrun") {
    harness h;
    const auto o = fall_due(h, "c2", finished_job::result::unclaimed).first;
    h.claims.winners[o.id()] = "c1";
    h.core.claims_read(h.now());
    CHECK(h.core.awaiting_claims() == 0);
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.events(job_event::kind::deduplicated).size() == 1);
    CHECK_FALSE(h.pop());
}

TEST_CASE("fault: a worker that finds the claim lost hands the copy back: acked unrun, no successor") {
    harness h;
    h.claims.enforced = true;
    const auto gen = h.subscribe();
    const auto o = next_occurrence(h, 1s, "c2");
    deliver(h, gen, 1, o);
    h.claims.winners[o.id()] = "c1";  // read while it was held
    h.advance(o.nominal - h.clock.wall_now());
    hand_back(h, finished_job::result::deduplicated);
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.take<action::publish>().empty());
    CHECK(h.counters.deduplicated == 1);
}

TEST_CASE("fault: while the stream is down, a waiting copy's claim is made again every second, and the copy is "
          "given back before the broker's consumer_timeout") {
    auto options = small_options();
    options.broker_consumer_timeout = 20s;  // given back 2 s before (backlog_margin)
    harness h(options);
    const auto delivered = h.clock.now();
    fall_due(h, "c1", finished_job::result::unclaimed);
    h.take<action::claim>();
    for (int i = 0; i < 2; ++i) {
        h.advance(1s);
        CHECK(h.take<action::claim>().size() == 1);
    }
    CHECK(h.take<action::nack>().empty());
    for (int i = 0; i < 20 && h.core.awaiting_claims() > 0; ++i) h.advance(1s);
    CHECK(h.core.awaiting_claims() == 0);
    const auto nacks = h.take<action::nack>();
    REQUIRE(nacks.size() == 1);  // requeued: the broker delivers it again
    const auto requeued = h.events(job_event::kind::requeued);
    REQUIRE(requeued.size() == 1);
    CHECK(requeued[0].reason == "backlog");
    CHECK(h.clock.now() - delivered < h.options.broker_consumer_timeout);
    CHECK(h.clock.now() - delivered >= h.options.broker_consumer_timeout - h.options.backlog_margin());
}

TEST_CASE("fault: the lane of a copy waiting for its claim is lost: dropped, never acked or run") {
    harness h;
    const auto [o, gen] = fall_due(h, "c1", finished_job::result::unclaimed);
    h.core.lane_lost(0, gen, "channel closed", h.now());
    h.core.sweep(h.now());
    CHECK(h.core.awaiting_claims() == 0);
    CHECK(h.events(job_event::kind::dropped).size() == 1);
    h.claims.winners[o.id()] = "c1";
    h.core.claims_read(h.now());
    CHECK_FALSE(h.pop());
    CHECK(h.take<action::ack>().empty());
}

TEST_CASE("fault: stop while a copy waits for its claim: given back (shutdown)") {
    harness h;
    fall_due(h, "c1", finished_job::result::unclaimed);
    h.core.stop(h.now());
    CHECK(h.core.awaiting_claims() == 0);
    CHECK(h.take<action::nack>().size() == 1);
    const auto requeued = h.events(job_event::kind::requeued);
    REQUIRE(requeued.size() == 1);
    CHECK(requeued[0].reason == "shutdown");
}

TEST_CASE("fault: a crash between a successor's confirm and the occurrence's ack leaves two successors: one runs") {
    // The occurrence's worker died after its successor (c1) was confirmed
    // and before its ack: the redelivered occurrence ran again and published
    // a second successor (c2). Both reach this consumer; c1 was claimed
    // first on the stream.
    harness h;
    h.claims.enforced = true;
    const auto gen = h.subscribe();
    const auto nominal = floor<seconds>(h.clock.wall_now()) + 1s;
    deliver(h, gen, 1, {nominal, "c1"});
    deliver(h, gen, 2, {nominal, "c2"});
    CHECK(h.take<action::claim>().size() == 2);
    h.claims.winners["tick@" + periodic::format_nominal(nominal)] = "c1";  // the stream's order
    h.core.claims_read(h.now());
    h.advance(nominal - h.clock.wall_now());
    // The workers ask the same oracle: c1 runs, c2 is handed back deduplicated.
    int ran = 0;
    while (auto j = h.pop()) {
        const auto props = j->msg.properties();
        std::string why;
        const auto o = contract::read_occurrence(props, why);
        REQUIRE(o);
        if (h.claims.verdict(o->id(), o->copy) == claim_verdict::runs) {
            ++ran;
            h.finish(std::move(*j), job_outcome::success());
        } else {
            h.core.finished({std::move(*j), finished_job::result::deduplicated, std::nullopt, h.clock.wall_now()},
                            h.now());
        }
    }
    CHECK(ran == 1);
    CHECK(h.counters.deduplicated == 1);
    // Exactly one successor for the next second: the chain stays single.
    const auto pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);
    h.core.copy_confirmed(pubs[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 2);  // the loser at once, the winner after its successor
}
