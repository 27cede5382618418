// The consumer core's promises, one fault at a time, on a fake clock: no
// broker, no threads (tests/unit/consumer/core_harness.hpp plays the driver
// and the workers).
#include "core_harness.hpp"

using namespace core_test;

TEST_CASE("admission: due now goes to the workers, due soon is held, due later is parked, bad input dead") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    CHECK(h.counters.fast_path == 1);
    CHECK(h.take<action::wake_workers>().size() == 1);
    h.deliver(0, gen, 2, 1500ms);
    h.deliver(0, gen, 3, 60s);
    CHECK(h.queue.size() == 2);
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].routing_key.rfind("jobs.wait.", 0) == 0);

    amqp::delivery bad;
    bad.delivery_tag = 4;
    bad.msg.properties.headers.emplace();
    bad.msg.properties.headers->set("perform_job_at", std::string("not a time"));
    h.core.delivery(0, gen, std::move(bad), h.now());
    ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].routing_key == "jobs.dead");
    CHECK(h.take<action::ack>().empty());  // nothing acked before its copy is confirmed
}

TEST_CASE("never early: a held job is handed out at its due time, not before") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 1500ms);
    h.clock.advance(1499ms);
    CHECK_FALSE(h.pop());
    h.clock.advance(1ms);
    CHECK(h.pop());
}

TEST_CASE("success is counted and reported when its ack is sent") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    auto j = h.pop();
    REQUIRE(j);
    CHECK(h.counters.succeeded == 0);
    h.finish(std::move(*j), job_outcome::success());
    auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == 1);
    CHECK(h.counters.succeeded == 1);
    CHECK(h.events(job_event::kind::succeeded).size() == 1);
}

TEST_CASE("fault: a job that fails after its channel was lost publishes nothing and is dropped") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    auto j = h.pop();
    REQUIRE(j);
    // The broker closes the connection while the handler sleeps.
    h.core.connection_lost("connection lost: CONNECTION_FORCED", h.now());
    h.finish(std::move(*j), job_outcome::failure("boom"));
    CHECK(h.take<action::publish>().empty());
    CHECK(h.take<action::ack>().empty());
    CHECK(h.events(job_event::kind::retry).empty());
    CHECK(h.events(job_event::kind::dropped).size() == 1);
    CHECK(h.counters.dropped == 1);
    CHECK(h.counters.retried == 0);
}

TEST_CASE("fault: a success after its channel was lost is dropped, not counted as succeeded") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    auto j = h.pop();
    h.core.lane_lost(0, gen, "channel closed", h.now());
    h.finish(std::move(*j), job_outcome::success());
    CHECK(h.take<action::ack>().empty());
    CHECK(h.counters.succeeded == 0);
    CHECK(h.counters.dropped == 1);
}

TEST_CASE("fault: a copy confirmed after its channel was lost acks nothing and is a possible duplicate") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    h.finish(*h.pop(), job_outcome::failure("boom"));
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    h.core.lane_lost(0, gen, "channel closed", h.now());
    h.core.copy_confirmed(ps[0].publish_id, h.now());
    CHECK(h.take<action::ack>().empty());
    CHECK(h.events(job_event::kind::retry).empty());
    CHECK(h.counters.late_confirms == 1);
}

TEST_CASE("a lost lane's held jobs are dropped; a connection loss takes one pass over the held jobs") {
    harness h(lanes_options(8, 4));
    const auto g0 = h.subscribe();
    // Two held per lane makes each lane hand over: fill all four.
    std::uint64_t tag = 0;
    for (int round = 0; round < 4; ++round) {
        const auto lane = static_cast<std::size_t>(round);
        const auto gen = round == 0 ? g0 : h.open_lane(lane);
        h.deliver(lane, gen, ++tag, 1s);
        h.deliver(lane, gen, ++tag, 1s);
    }
    CHECK(h.queue.size() == 8);
    CHECK(h.counters.lane_changes == 3);
    h.store.passes = 0;
    h.core.connection_lost("connection lost", h.now());
    REQUIRE(h.take<action::sweep>().size() == 1);  // asked for once, for all four lanes
    h.core.sweep(h.now());
    CHECK(h.store.passes == 1);
    CHECK(h.queue.size() == 0);
    CHECK(h.counters.dropped == 8);
    CHECK(h.counters.channel_losses == 4);
}

TEST_CASE("lanes: a lane holding its share hands over; the old one is never cancelled while it holds jobs") {
    // A quorum queue keeps a cancelled consumer's deliveries checked out when
    // the consumer's node loses the queue's leader, and never gives them back
    // (RabbitMQ 3.10.8 and 4.0.5): the old lane goes on consuming, its
    // prefetch ends its intake.
    harness h(lanes_options(4, 2));
    const auto g0 = h.subscribe();
    h.deliver(0, g0, 1, 1s);
    CHECK(h.take<action::start_lane>().empty());
    h.deliver(0, g0, 2, 1s);
    auto starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    CHECK(starts[0].lane == 1);
    const auto g1 = h.open_lane(1);
    CHECK(h.take<action::cancel_lane>().empty());
    CHECK(h.counters.lane_changes == 1);
    CHECK(h.core.lanes()[0].state == lane_state::intake::consuming);
    CHECK(h.core.lanes()[1].state == lane_state::intake::consuming);
    // Both take deliveries; once the newest holds its share too, no lane is
    // left to hand over to: nothing starts, nothing is cancelled.
    h.deliver(0, g0, 3, 1s);
    h.deliver(1, g1, 4, 1s);
    h.deliver(1, g1, 5, 1s);
    CHECK(h.take<action::start_lane>().empty());
    CHECK(h.take<action::cancel_lane>().empty());
    CHECK(h.queue.size() == 5);
}

TEST_CASE("fault: after a due-backlog pause, every lane that holds jobs consumes again, one after the other") {
    // A pause cancels every lane; a lane left cancelled while it holds jobs
    // would lose them to the quorum queue's gap above at the next partition.
    subscription_options o = lanes_options(4, 2);
    o.max_due_waiting = 2;
    harness h(o);
    const auto g0 = h.subscribe();
    h.deliver(0, g0, 1, 1s);
    h.deliver(0, g0, 2, 1s);  // lane 0 holds its share: lane 1 takes over
    auto starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    const auto g1 = h.open_lane(1);
    h.deliver(1, g1, 3, std::nullopt);
    h.deliver(1, g1, 4, std::nullopt);  // two due jobs wait: the pause
    auto cancels = h.take<action::cancel_lane>();
    REQUIRE(cancels.size() == 2);
    CHECK(((cancels[0].lane == 0 && cancels[1].lane == 1) || (cancels[0].lane == 1 && cancels[1].lane == 0)));
    CHECK(h.take<action::start_lane>().empty());
    // Both due jobs run: the pause ends, and a lane consumes again...
    h.finish(*h.pop(), job_outcome::success());
    h.finish(*h.pop(), job_outcome::success());
    h.core.tick(h.now());
    starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    const auto first = starts[0].lane;
    h.core.lane_consuming(first, h.core.lanes().incarnations()->get(first), "ctag-again-" + std::to_string(first));
    // ...then the other one, which still holds jobs.
    starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    CHECK(starts[0].lane != first);
    const auto second = starts[0].lane;
    h.core.lane_consuming(second, h.core.lanes().incarnations()->get(second), "ctag-again-" + std::to_string(second));
    CHECK(h.take<action::start_lane>().empty());
    CHECK(h.take<action::cancel_lane>().empty());
    for (std::size_t lane : {std::size_t{0}, std::size_t{1}})
        CHECK(h.core.lanes()[lane].state == lane_state::intake::consuming);
    CHECK(h.queue.size() == 2);  // the held jobs stayed held throughout
    CHECK(h.counters.lane_changes == 1);  // consuming again is no hand-over
}

namespace {
subscription_options two_held() {
    subscription_options o = small_options();
    o.broker_consumer_timeout = 60s;
    o.hold_horizon = 30s;
    o.max_held = 2;
    o.channels = 1;
    return o;
}

/// A delivery due at the wall time `due`, as the broker hands it over.
void deliver_due(harness& h, std::uint32_t gen, std::uint64_t tag, wall_time due) {
    amqp::delivery d;
    d.delivery_tag = tag;
    d.msg.properties.message_id = "job-" + std::to_string(tag);
    contract::write_schedule(d.msg.properties, due, h.clock.wall_now());
    d.msg.body = {'x'};
    h.core.delivery(0, gen, std::move(d), h.now());
}
}  // namespace

TEST_CASE("full: a job due sooner takes the place of the job due last, which is parked") {
    harness h(two_held());
    const auto gen = h.subscribe();
    const auto due = h.clock.wall_now() + 20s;
    deliver_due(h, gen, 1, due);
    deliver_due(h, gen, 2, due + 1s);
    deliver_due(h, gen, 3, due - 1s);
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].message.properties.message_id == "job-2");
    CHECK(h.queue.size() == 2);
}

TEST_CASE("fault: clock jitter: a job due at the same wall time as the job due last does not displace it") {
    // Each conversion to the steady clock reads both clocks; between the
    // reads time passes, so one wall time converts a little differently
    // each time. Modelled as a small wall step: no job may be displaced (and
    // parked in its place) by the same due time (it made every job beyond
    // max_held move lanes and park twice).
    harness h(two_held());
    const auto gen = h.subscribe();
    const auto due = h.clock.wall_now() + 20s;
    deliver_due(h, gen, 1, due);
    deliver_due(h, gen, 2, due);
    h.clock.step_wall(500us);
    deliver_due(h, gen, 3, due);
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].message.properties.message_id == "job-3");
    CHECK(h.take<action::start_lane>().empty());
}

TEST_CASE("fault: stop() while a lane is starting: the consumer it gets is cancelled") {
    harness h;
    h.core.subscribed();
    auto starts = h.take<action::start_lane>();
    REQUIRE(starts.size() == 1);
    const auto gen = h.core.lane_opened(0);
    h.core.stop(h.now());
    CHECK(h.take<action::cancel_lane>().empty());  // nothing consumes yet
    h.core.lane_consuming(0, gen, "ctag-late");   // consume-ok after the cancels went out
    auto cancels = h.take<action::cancel_lane>();
    REQUIRE(cancels.size() == 1);
    CHECK(cancels[0].consumer_tag == "ctag-late");
    // What crossed the cancel is given back, not held.
    h.deliver(0, gen, 1, 1s);
    CHECK(h.take<action::nack>().size() == 1);
    CHECK(h.queue.size() == 0);
}

TEST_CASE("fault: a due backlog is given back before the broker's consumer_timeout") {
    // One worker, 12 jobs due now that take 1 s each, consumer_timeout 5 s:
    // margin max(10 %, 2 s) = 2 s, so a due job not started 3 s after its
    // delivery goes back to the queue.
    harness h;
    CHECK(h.options.backlog_margin() == 2s);
    const auto gen = h.subscribe();
    for (std::uint64_t t = 1; t <= 12; ++t) h.deliver(0, gen, t, std::nullopt);
    std::size_t ran = 0;
    for (int second = 0; second < 3; ++second) {
        auto j = h.pop();
        REQUIRE(j);
        h.advance(1s);
        h.finish(std::move(*j), job_outcome::success());
        ++ran;
    }
    CHECK(ran == 3);
    auto nacks = h.take<action::nack>();
    CHECK(nacks.size() == 9);
    const auto requeued = h.events(job_event::kind::requeued);
    REQUIRE(requeued.size() == 9);
    for (const auto& e : requeued) CHECK(e.reason == "backlog");
    CHECK(h.queue.size() == 0);
    CHECK(h.take<action::ack>().size() == 3);
}

TEST_CASE("the due backlog is bounded: the intake pauses at max_due_waiting and resumes at half") {
    subscription_options o = small_options();
    o.max_due_waiting = 4;
    harness h(o);
    const auto gen = h.subscribe();
    for (std::uint64_t t = 1; t <= 3; ++t) h.deliver(0, gen, t, std::nullopt);
    CHECK(h.take<action::cancel_lane>().empty());
    h.deliver(0, gen, 4, std::nullopt);  // the fourth waiting job: full
    auto cancels = h.take<action::cancel_lane>();
    REQUIRE(cancels.size() == 1);
    CHECK(cancels[0].lane == 0);
    // Deliveries already on their way when the cancel went out are still taken.
    h.deliver(0, gen, 5, std::nullopt);
    CHECK(h.queue.size() == 5);
    // A resubscribe (say, after a reconnect) does not end the pause.
    h.core.subscribed();
    CHECK(h.take<action::start_lane>().empty());
    for (int i = 0; i < 2; ++i) h.finish(*h.pop(), job_outcome::success());
    CHECK(h.take<action::start_lane>().empty());  // 3 still wait: above half of 4
    h.finish(*h.pop(), job_outcome::success());
    auto starts = h.take<action::start_lane>();  // 2 wait: the intake resumes
    REQUIRE(starts.size() == 1);
    h.open_lane(starts[0].lane);
    CHECK(h.take<action::cancel_lane>().empty());
    CHECK(h.take<action::ack>().size() == 3);
}

TEST_CASE("the derived due backlog bound follows the workers") {
    subscription_options o;
    o.workers = 1;
    CHECK(o.effective_max_due_waiting() == 512);
    o.workers = 16;
    CHECK(o.effective_max_due_waiting() == 1024);
    o.max_due_waiting = 10;
    CHECK(o.effective_max_due_waiting() == 10);
}

TEST_CASE("a held job is never given back as backlog as it falls due") {
    harness h;  // hold_horizon 2 s, consumer_timeout 5 s, margin 2 s
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 2s);
    h.advance(2s);
    h.advance(500ms);
    CHECK(h.take<action::nack>().empty());
    CHECK(h.pop());
}

TEST_CASE("fault: a consumer up for longer than 2^32 ms (49.7 days) still counts a delivery's age from its delivery") {
    // Delivery times are kept as 32-bit milliseconds since the core began;
    // 60 days in, a job delivered now is neither past its deadline nor
    // given back as backlog, held or due, nor its copy given up on.
    harness h;  // hold_horizon 2 s, consumer_timeout 5 s, margin 2 s
    h.advance(std::chrono::hours(24 * 60));
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 2s);
    h.deliver(0, gen, 2, std::nullopt);
    h.advance(1s);
    CHECK(h.take<action::nack>().empty());
    CHECK(h.events(job_event::kind::requeued).empty());
    auto now_job = h.pop();
    REQUIRE(now_job);
    h.finish(std::move(*now_job), job_outcome::success());
    h.advance(1500ms);
    CHECK(h.take<action::nack>().empty());
    auto held = h.pop();
    REQUIRE(held);
    h.finish(std::move(*held), job_outcome::success());
    CHECK(h.take<action::ack>().size() == 2);
    // And one that does wait too long is still given back in time: not
    // before its deadline, 3 s after its delivery (consumer_timeout 5 s -
    // margin 2 s), and before the broker's timeout.
    h.deliver(0, gen, 3, std::nullopt);
    std::chrono::milliseconds waited{0};
    while (waited < 5s && h.take<action::nack>().empty()) {
        h.advance(100ms);
        waited += 100ms;
    }
    CHECK(waited >= 3s);
    CHECK(waited < 5s);
}

TEST_CASE("validate() refuses a hold horizon that leaves less than the backlog margin") {
    subscription_options o = small_options();
    o.hold_horizon = 3500ms;  // 5 s timeout - 2 s margin = 3 s at most
    const auto problem = validate(o);
    REQUIRE(problem);
    CHECK(problem->option == "hold_horizon");
    o.hold_horizon = 3s;
    CHECK_FALSE(validate(o));
}

TEST_CASE("fault: prefetch is never unlimited; lanes are added when a share needs it") {
    subscription_options o;
    o.queue = "jobs";
    o.channels = 1;
    o.max_held = 40000;
    CHECK(o.effective_prefetch() != 0);
    CHECK(o.effective_channels() >= 2);
    CHECK(2 * o.lane_hold() + o.workers + 64 <= 65535);
    o.max_held = 1000000;
    o.channels = 0;
    CHECK(o.effective_prefetch() != 0);
    CHECK(2 * o.lane_hold() + o.workers + 64 <= 65535);
    CHECK_FALSE(validate(o));
}

TEST_CASE("fault: a copy not confirmed in time is a refusal; published again; a late confirm is a possible duplicate") {
    subscription_options o = small_options();
    o.broker_consumer_timeout = 60s;
    o.hold_horizon = 2s;
    o.copy_confirm_timeout = 1s;
    o.republish_backoff = retry::backoff_policy::fixed(500ms);
    harness h(o);
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    h.finish(*h.pop(), job_outcome::failure("boom"));
    auto first = h.take<action::publish>();
    REQUIRE(first.size() == 1);
    h.advance(1s);  // no confirm: an alarm, say
    CHECK(h.counters.copy_failures == 1);
    CHECK(h.events(job_event::kind::failed).size() == 1);
    CHECK(h.take<action::ack>().empty());
    h.advance(500ms);
    auto second = h.take<action::publish>();
    REQUIRE(second.size() == 1);
    CHECK(second[0].publish_id != first[0].publish_id);
    // The first copy's confirm comes late: it settles the original.
    h.core.copy_confirmed(first[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.events(job_event::kind::retry).size() == 1);
    CHECK(h.counters.late_confirms == 0);
    // The second copy exists too: counted, never lost.
    h.core.copy_confirmed(second[0].publish_id, h.now());
    CHECK(h.counters.late_confirms == 1);
    CHECK(h.take<action::ack>().empty());
}

TEST_CASE("fault: while copies are refused the handler is not run again; the copy is published again") {
    subscription_options o = small_options();
    o.broker_consumer_timeout = 60s;
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt);
    h.finish(*h.pop(), job_outcome::failure("boom"));
    for (int round = 0; round < 5; ++round) {
        auto ps = h.take<action::publish>();
        REQUIRE(ps.size() == 1);
        CHECK(ps[0].routing_key == "jobs");
        h.core.copy_refused(ps[0].publish_id, amqp::make_error_code(amqp::errc::publish_nacked), 0, h.now());
        CHECK(h.take<action::nack>().empty());  // not given back: it would run again at the same attempt
        h.advance(1s);
    }
    CHECK(h.counters.copy_failures == 5);
    CHECK_FALSE(h.pop());  // the handler never gets it again
    CHECK(h.counters.handler_failures == 1);
}

TEST_CASE("a refused parked copy is made again from its original and published again") {
    subscription_options o = small_options();
    o.broker_consumer_timeout = 60s;
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 30s, "far");
    auto first = h.take<action::publish>();
    REQUIRE(first.size() == 1);
    h.core.copy_refused(first[0].publish_id, amqp::make_error_code(amqp::errc::publish_nacked), 0, h.now());
    h.advance(1s);
    auto again = h.take<action::publish>();
    REQUIRE(again.size() == 1);
    CHECK(again[0].routing_key == first[0].routing_key);
    CHECK(again[0].message.properties.message_id == first[0].message.properties.message_id);
    CHECK(again[0].message.properties.headers == first[0].message.properties.headers);
    h.core.copy_confirmed(again[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.counters.parked == 1);
}

TEST_CASE("a refused copy whose original would overstay the consumer_timeout gives the original back") {
    subscription_options o = small_options();  // timeout 5 s, margin 2 s
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    o.copy_confirm_timeout = 1s;
    harness h(o);
    const auto gen = h.subscribe();
    const auto delivered = h.clock.now();
    h.deliver(0, gen, 1, std::nullopt);
    h.finish(*h.pop(), job_outcome::failure("boom"));
    std::vector<job_event> given_back;
    for (int i = 0; i < 10 && given_back.empty(); ++i) {
        for (auto& p : h.take<action::publish>())
            h.core.copy_refused(p.publish_id, amqp::make_error_code(amqp::errc::publish_nacked), 0, h.now());
        h.advance(1s);
        given_back = h.events(job_event::kind::requeued);
    }
    REQUIRE(given_back.size() == 1);
    CHECK(given_back[0].reason == "copy-failed");
    // By its deadline: consumer_timeout 5 s - margin 2 s after its delivery.
    CHECK(h.clock.now() - delivered <= 3s);
    CHECK(h.take<action::nack>().size() == 1);
    CHECK(h.take<action::ack>().empty());
}

TEST_CASE("fault: a backward clock step: a job released early by the wall clock is held again, or parked") {
    harness h;  // hold_horizon 2 s
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 1s);
    h.deliver(0, gen, 2, 1s);
    h.clock.advance(1s);
    h.clock.step_wall(-500ms);  // the wall clock goes back half a second
    auto a = h.pop();
    REQUIRE(a);
    h.core.finished({std::move(*a), finished_job::result::not_yet_due, std::nullopt, {}}, h.now());
    CHECK(h.queue.size() == 2);
    h.clock.advance(499ms);
    auto b = h.pop();  // the other one, due by the steady clock (a worker would hand it back too)
    REQUIRE(b);
    CHECK(b->delivery_tag == 2);
    CHECK_FALSE(h.pop());  // the first one waits the half second the step added
    h.clock.advance(1ms);
    a = h.pop();
    REQUIRE(a);
    CHECK(a->delivery_tag == 1);
    h.clock.step_wall(-1h);  // then far back: beyond the hold horizon
    h.core.finished({std::move(*a), finished_job::result::not_yet_due, std::nullopt, {}}, h.now());
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].routing_key.rfind("jobs.wait.", 0) == 0);
}

TEST_CASE("stop: held and not started jobs go back with one multiple nack per lane") {
    harness h;
    const auto gen = h.subscribe();
    for (std::uint64_t t = 1; t <= 5; ++t) h.deliver(0, gen, t, 1s);
    h.core.stop(h.now());
    CHECK(h.take<action::cancel_lane>().size() == 1);
    h.core.give_back(h.queue.drain(), h.now());
    auto nacks = h.take<action::nack>();
    REQUIRE(nacks.size() == 1);
    CHECK(nacks[0].multiple);
    CHECK(nacks[0].tag == 5);
    CHECK(h.events(job_event::kind::requeued).size() == 5);
}

TEST_CASE("a lost lane is resubscribed after a pause, not while stopping") {
    harness h;
    const auto gen = h.subscribe();
    h.core.lane_lost(0, gen, "channel closed: PRECONDITION_FAILED", h.now());
    CHECK(h.take<action::close_lane>().size() == 1);
    CHECK(h.take<action::subscribe>().empty());
    h.advance(200ms);
    CHECK(h.take<action::subscribe>().size() == 1);
    const auto g2 = h.subscribe();
    h.core.stop(h.now());
    h.core.lane_lost(0, g2, "closed", h.now());
    h.advance(1s);
    CHECK(h.take<action::subscribe>().empty());
}
