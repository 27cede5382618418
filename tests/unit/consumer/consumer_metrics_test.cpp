// The consumer core's metrics on a fake clock (core_harness.hpp): counts by
// reason that add up to the totals, the dead letters noted, the oldest
// unsettled delivery (and a channel loss that drops it), whether a lane
// consumes, the held jobs a page at a time and the next due time, and the
// workers' histograms.
#include "consumer_workers.hpp"
#include "core_harness.hpp"
#include "held_jobs_listing.hpp"

#include <numeric>

using namespace core_test;

namespace {
template <std::size_t N>
std::uint64_t sum(const std::array<std::atomic<std::uint64_t>, N>& a) {
    std::uint64_t n = 0;
    for (const auto& x : a) n += x.load();
    return n;
}

std::uint64_t dead(const harness& h, std::string_view label) {
    const auto i = std::find(dead_letter_reasons.begin(), dead_letter_reasons.end(), label) - dead_letter_reasons.begin();
    return h.counters.dead_lettered_by_reason[static_cast<std::size_t>(i)];
}
std::uint64_t requeued(const harness& h, std::string_view label) {
    const auto i = std::find(requeue_reasons.begin(), requeue_reasons.end(), label) - requeue_reasons.begin();
    return h.counters.requeued_by_reason[static_cast<std::size_t>(i)];
}

void confirm_all(harness& h) {
    for (auto& p : h.take<action::publish>()) h.core.copy_confirmed(p.publish_id, h.now());
}

held_jobs_page page(const harness& h, std::size_t limit, std::string_view after = {}) {
    std::error_code ec;
    auto p = list_held_jobs(h.queue, limit, after, ec);
    CHECK_FALSE(ec);
    return p;
}
std::vector<std::string> ids(const held_jobs_page& p) {
    std::vector<std::string> out;
    for (const auto& j : p.jobs) out.push_back(j.id);
    return out;
}
}  // namespace

TEST_CASE("counts by reason add up to dead_lettered and requeued, each under its label") {
    subscription_options o = small_options();
    o.broker_consumer_timeout = 60s;
    o.retry->max_attempts = 1;
    o.delivery_limit = 5;
    o.copy_confirm_timeout = 1s;
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    const auto gen = h.subscribe();
    std::uint64_t tag = 0;
    // Dead letters: a bad schedule, a rejection, attempts exhausted.
    amqp::delivery bad;
    bad.delivery_tag = ++tag;
    bad.msg.properties.headers.emplace();
    bad.msg.properties.headers->set("perform_job_at", std::string("not a time"));
    h.core.delivery(0, gen, std::move(bad), h.now());
    h.deliver(0, gen, ++tag, std::nullopt);
    h.finish(*h.pop(), job_outcome::reject("no"));
    h.deliver(0, gen, ++tag, std::nullopt);
    h.finish(*h.pop(), job_outcome::failure("boom"));
    confirm_all(h);
    // Requeues: the handler asks (a nack), and a delivery arrives one
    // return from the delivery limit (renewed: a copy, confirmed).
    h.deliver(0, gen, ++tag, std::nullopt);
    h.finish(*h.pop(), job_outcome::requeue());
    amqp::delivery limited;
    limited.delivery_tag = ++tag;
    limited.msg.properties.headers.emplace();
    limited.msg.properties.headers->set("x-delivery-count", std::int64_t{4});
    h.core.delivery(0, gen, std::move(limited), h.now());
    CHECK_FALSE(h.pop());  // not run: renewed
    confirm_all(h);
    // copy-failed: a dead letter refused until the original must go back.
    h.events(job_event::kind::requeued);  // the ones above, out of the way
    h.deliver(0, gen, ++tag, std::nullopt);
    h.finish(*h.pop(), job_outcome::failure("boom"));
    for (int i = 0; i < 60 && h.events(job_event::kind::requeued).empty(); ++i) {
        for (auto& p : h.take<action::publish>())
            h.core.copy_refused(p.publish_id, amqp::make_error_code(amqp::errc::publish_nacked), 0, h.now());
        h.advance(1s);
    }
    // shutdown: held jobs go back with one multiple nack, and one by one.
    for (int i = 0; i < 3; ++i) h.deliver(0, gen, ++tag, 1s);
    h.core.stop(h.now());
    h.core.give_back(h.queue.drain(), h.now());
    h.deliver(0, gen, ++tag, 1s);  // crossed the cancel: given back alone

    CHECK(h.counters.dead_lettered == 3);
    CHECK(dead(h, "invalid-schedule") == 1);
    CHECK(dead(h, "rejected") == 1);
    CHECK(dead(h, "attempts-exhausted") == 1);
    CHECK(sum(h.counters.dead_lettered_by_reason) == h.counters.dead_lettered);
    CHECK(requeued(h, "handler") == 1);
    CHECK(requeued(h, "delivery-limit") == 1);
    CHECK(requeued(h, "copy-failed") == 1);
    CHECK(requeued(h, "shutdown") == 4);
    CHECK(requeued(h, "other") == 0);
    CHECK(h.counters.requeued == 7);
    CHECK(sum(h.counters.requeued_by_reason) == h.counters.requeued);
}

TEST_CASE("a dead letter is noted when its copy is confirmed: id, whole reason, when") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 1s, "held-one");  // held: packed, its id read from the packed properties
    h.advance(1s);
    h.finish(*h.pop(), job_outcome::reject("bad input"));
    CHECK(h.take<action::note_dead_letter>().empty());  // not before the confirm
    h.clock.advance(5ms);
    const auto confirmed = h.clock.wall_now();
    confirm_all(h);
    auto notes = h.take<action::note_dead_letter>();
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].letter.id == "held-one");
    CHECK(notes[0].letter.reason == "rejected: bad input");
    CHECK(notes[0].letter.at == confirmed);
    // Parked and retried copies are no dead letters.
    h.deliver(0, gen, 2, 60s);
    confirm_all(h);
    CHECK(h.take<action::note_dead_letter>().empty());
}

TEST_CASE("oldest unsettled: the oldest delivery not yet acked or nacked, whatever settles first") {
    harness h;
    const auto gen = h.subscribe();
    CHECK_FALSE(h.core.oldest_unsettled());
    const auto t0 = h.clock.now();
    h.deliver(0, gen, 1, std::nullopt);
    h.clock.advance(1s);
    h.deliver(0, gen, 2, 1500ms);  // held
    h.clock.advance(1s);
    h.deliver(0, gen, 3, std::nullopt);
    CHECK(h.core.oldest_unsettled() == t0);
    auto first = h.pop();
    auto third = h.pop();
    REQUIRE(third);
    h.finish(std::move(*third), job_outcome::success());
    CHECK(h.core.oldest_unsettled() == t0);  // the first is still running
    h.finish(std::move(*first), job_outcome::success());
    CHECK(h.core.oldest_unsettled() == t0 + 1s);  // the held one
    h.advance(1s);
    auto held = h.pop();
    REQUIRE(held);
    h.finish(std::move(*held), job_outcome::failure("boom"));  // a retry copy: unsettled until confirmed
    CHECK(h.core.oldest_unsettled() == t0 + 1s);
    confirm_all(h);
    CHECK_FALSE(h.core.oldest_unsettled());
}

TEST_CASE("fault: a channel loss: its deliveries no longer count as unacknowledged, the other lane's do") {
    harness h(lanes_options(4, 2));
    const auto g0 = h.subscribe();
    const auto t0 = h.clock.now();
    h.deliver(0, g0, 1, 1s);
    h.clock.advance(10ms);
    h.deliver(0, g0, 2, 1s);  // lane 0 holds its share: lane 1 takes over
    REQUIRE(h.take<action::start_lane>().size() == 1);
    const auto g1 = h.open_lane(1);
    h.clock.advance(10ms);
    h.deliver(1, g1, 1, 1s);
    CHECK(h.core.oldest_unsettled() == t0);
    h.core.lane_lost(0, g0, "channel closed", h.now());
    CHECK(h.core.oldest_unsettled() == t0 + 20ms);
    // And its held jobs leave the listing once swept.
    CHECK(page(h, 10).jobs.size() == 3);
    h.core.sweep(h.now());
    auto p = page(h, 10);
    REQUIRE(p.jobs.size() == 1);
    CHECK(p.jobs[0].lane == 1);
    CHECK(p.held == 1);
    h.core.connection_lost("connection lost", h.now());
    CHECK_FALSE(h.core.oldest_unsettled());
}

TEST_CASE("oldest unsettled: stop's multiple nack settles the whole lane") {
    harness h;
    const auto gen = h.subscribe();
    for (std::uint64_t t = 1; t <= 5; ++t) h.deliver(0, gen, t, 1s);
    CHECK(h.core.oldest_unsettled());
    h.core.stop(h.now());
    h.core.give_back(h.queue.drain(), h.now());
    REQUIRE(h.take<action::nack>().size() == 1);
    CHECK_FALSE(h.core.oldest_unsettled());
}

TEST_CASE("consuming: while a lane consumes or the intake is paused for the backlog; not after a loss") {
    subscription_options o = small_options();
    o.max_due_waiting = 2;
    harness h(o);
    CHECK_FALSE(h.core.consuming());
    const auto gen = h.subscribe();
    CHECK(h.core.consuming());
    h.deliver(0, gen, 1, std::nullopt);
    h.deliver(0, gen, 2, std::nullopt);  // the backlog is full: the intake pauses
    REQUIRE(h.take<action::cancel_lane>().size() == 1);
    CHECK(h.core.consuming());
    h.finish(*h.pop(), job_outcome::success());  // resumes
    const auto lane = h.take<action::start_lane>().at(0).lane;
    const auto g2 = h.open_lane(lane);
    CHECK(h.core.consuming());
    h.core.lane_lost(lane, g2, "channel closed", h.now());
    CHECK_FALSE(h.core.consuming());
}

TEST_CASE("held jobs: pages in due order (the ready path first), with id, due, attempt and lane") {
    harness h;
    const auto gen = h.subscribe();
    const auto now = h.clock.wall_now();
    h.deliver(0, gen, 1, 1500ms, "c");
    h.deliver(0, gen, 2, 500ms, "a");
    h.deliver(0, gen, 3, std::nullopt, "now");
    h.deliver(0, gen, 4, 1000ms, "b");
    auto p1 = page(h, 2);
    CHECK(ids(p1) == std::vector<std::string>{"now", "a"});
    CHECK(p1.held == 4);
    REQUIRE(p1.next);
    CHECK(p1.jobs[1].due == now + 500ms);
    CHECK(p1.jobs[1].attempt == 1);
    CHECK(p1.jobs[1].lane == 0);
    auto p2 = page(h, 2, *p1.next);
    CHECK(ids(p2) == std::vector<std::string>{"b", "c"});
    CHECK_FALSE(p2.next);  // nothing after it: the last page
    CHECK(ids(page(h, 100)) == std::vector<std::string>{"now", "a", "b", "c"});
    CHECK_FALSE(page(h, 4).next);
}

TEST_CASE("fault: a cursor across pops and arrivals: no job held throughout is repeated or skipped") {
    harness h;
    const auto gen = h.subscribe();
    for (std::uint64_t t = 1; t <= 6; ++t)
        h.deliver(0, gen, t, std::chrono::milliseconds(100 * t), "j" + std::to_string(t));
    auto p1 = page(h, 3);
    REQUIRE(ids(p1) == std::vector<std::string>{"j1", "j2", "j3"});
    h.advance(250ms);
    h.finish(*h.pop(), job_outcome::success());  // j1 and j2 run
    h.finish(*h.pop(), job_outcome::success());
    h.deliver(0, gen, 7, 20ms, "early");  // due before the cursor: not on the next page
    h.deliver(0, gen, 8, 300ms, "late");  // due among the rest: listed in its place
    auto p2 = page(h, 10, *p1.next);
    CHECK(ids(p2) == std::vector<std::string>{"j4", "j5", "late", "j6"});
}

TEST_CASE("held jobs: a cursor that does not decode, limit 0, and a clamped limit") {
    harness h;
    const auto gen = h.subscribe();
    for (std::uint64_t t = 1; t <= 1005; ++t) h.deliver(0, gen, t, 1s);
    std::error_code ec;
    auto bad = list_held_jobs(h.queue, 10, "not-a-cursor", ec);
    CHECK(ec == std::errc::invalid_argument);
    CHECK(bad.jobs.empty());
    CHECK_FALSE(bad.next);
    auto first = list_held_jobs(h.queue, 2, "", ec);
    CHECK_FALSE(ec);
    auto none = list_held_jobs(h.queue, 0, *first.next, ec);
    CHECK_FALSE(ec);
    CHECK(none.jobs.empty());
    CHECK(none.next == first.next);  // the same place: go on from it
    CHECK(none.held == 1005);
    CHECK(list_held_jobs(h.queue, 0, "", ec).next == "");
    auto big = list_held_jobs(h.queue, 1u << 30, "", ec);
    CHECK(big.jobs.size() == held_jobs_max_limit);
    CHECK(big.next);
}

TEST_CASE("next due: the earliest due time of the held jobs, wall clock; empty when none") {
    harness h;
    CHECK_FALSE(next_due(h.queue));
    const auto gen = h.subscribe();
    const auto now = h.clock.wall_now();
    h.deliver(0, gen, 1, 1500ms);
    h.deliver(0, gen, 2, 700ms);
    CHECK(next_due(h.queue) == now + 700ms);
    h.deliver(0, gen, 3, std::nullopt);  // due at once: the ready path
    CHECK(next_due(h.queue) == now);
    h.pop();
    CHECK(next_due(h.queue) == now + 700ms);
}

TEST_CASE("the workers record start lateness at every run and how long each handler ran") {
    auto counters = std::make_shared<core_counters>();
    auto incarnations = std::make_shared<lane_incarnations>(1);
    incarnations->set(0, 1);
    worker_context ctx(
        [](const job&) {
            std::this_thread::sleep_for(20ms);
            return job_outcome::success();
        },
        nullptr, nullptr, counters, incarnations, [] {});
    for (int i = 0; i < 3; ++i) {
        held_job j;
        j.incarnation = 1;
        j.due = std::chrono::system_clock::now() - 2s;  // two seconds late
        j.msg = packed_message::pack(amqp::message{});
        held_item it{std::move(j), {}, 0};
        ctx.run(it);
    }
    const auto late = counters->start_lateness.snapshot();
    CHECK(late.count == counters->started);
    CHECK(late.count == 3);
    CHECK(late.sum_seconds >= 6.0);
    CHECK(late.counts[13] == 3);  // (1, 2.5] s
    const auto ran = counters->handler_duration.snapshot();
    CHECK(ran.count == 3);
    CHECK(ran.sum_seconds >= 0.06);
}
