// A quorum queue's delivery limit (x-delivery-limit; 20 by default from
// RabbitMQ 4.0 on): which limit is in force, and that no job is ever handed
// back by a return that the limit would make its last. The core on a fake
// clock (core_harness.hpp).
#include "core_harness.hpp"

#include "core/delivery_limit.hpp"
#include "core/reason_labels.hpp"

using namespace core_test;

namespace {
subscription_options limited(std::optional<std::uint32_t> limit) {
    subscription_options o = small_options();
    o.delivery_limit = limit;
    return o;
}

/// A delivery due `in` from now whose broker count of earlier returns is
/// `count` (no header: none yet, as RabbitMQ 4.0 sends a first delivery).
void deliver_counted(harness& h, std::uint32_t gen, std::uint64_t tag, std::chrono::milliseconds in,
                     std::optional<std::int64_t> count) {
    amqp::delivery d;
    d.delivery_tag = tag;
    d.redelivered = count.has_value();
    d.msg.properties.message_id = "job-" + std::to_string(tag);
    contract::write_schedule(d.msg.properties, h.clock.wall_now() + in, h.clock.wall_now());
    if (count) d.msg.properties.headers->set("x-delivery-count", *count);
    d.msg.body = {'x'};
    h.core.delivery(0, gen, std::move(d), h.now());
}

std::optional<double> due_header(const amqp::message& m) {
    const auto* v = m.properties.headers ? m.properties.headers->find("perform_job_at") : nullptr;
    if (v == nullptr) return std::nullopt;
    if (const auto* d = std::get_if<double>(&v->value)) return *d;
    return std::nullopt;
}

void refuse_all(harness& h) {
    for (auto& p : h.take<action::publish>())
        h.core.copy_refused(p.publish_id, amqp::make_error_code(amqp::errc::publish_nacked), 0, h.now());
}
}  // namespace

TEST_CASE("delivery limit in force: told, or derived from the broker's version") {
    CHECK(delivery_limit_in_force(std::nullopt, "3.10.8") == std::nullopt);
    CHECK(delivery_limit_in_force(std::nullopt, "3.13.7") == std::nullopt);
    CHECK(delivery_limit_in_force(std::nullopt, "4.0.5") == 20u);
    CHECK(delivery_limit_in_force(std::nullopt, "4.3.0") == 20u);
    CHECK(delivery_limit_in_force(std::nullopt, "4.1.0-rc.1") == 20u);
    CHECK(delivery_limit_in_force(std::nullopt, "10.0.0") == 20u);
    // Not known, or not readable: the safe side.
    CHECK(delivery_limit_in_force(std::nullopt, "") == 20u);
    CHECK(delivery_limit_in_force(std::nullopt, "unknown") == 20u);
    CHECK(delivery_limit_in_force(std::nullopt, "3") == 20u);
    // Told: 0 is none (a policy lifted the limit), N is N, whatever the broker.
    CHECK(delivery_limit_in_force(0u, "4.0.5") == std::nullopt);
    CHECK(delivery_limit_in_force(3u, "3.10.8") == 3u);
    CHECK(delivery_limit_in_force(1u, "4.0.5") == 1u);
}

TEST_CASE("delivery limit: the renewal threshold leaves a margin below the limit, and never renews a count of 0") {
    CHECK(renewal_threshold(20) == 15);
    CHECK(renewal_threshold(8) == 6);
    CHECK(renewal_threshold(4) == 3);
    CHECK(renewal_threshold(3) == 2);
    CHECK(renewal_threshold(2) == 1);
    CHECK(renewal_threshold(1) == 1);
    CHECK(renewal_threshold(100) == 75);
    CHECK_FALSE(renew_at_admission(20, std::nullopt));
    CHECK_FALSE(renew_at_admission(1, 0));
    CHECK_FALSE(renew_at_admission(20, 14));
    CHECK(renew_at_admission(20, 15));
    CHECK(renew_at_admission(20, 20));
}

TEST_CASE("delivery limit: the core takes the broker's version at each connect") {
    harness h(limited(std::nullopt));
    CHECK(h.core.delivery_limit() == 20u);  // before any connect: the safe side
    h.core.broker_identified("3.10.8");
    CHECK(h.core.delivery_limit() == std::nullopt);
    h.core.broker_identified("4.0.5");
    CHECK(h.core.delivery_limit() == 20u);
    harness told(limited(0));
    told.core.broker_identified("4.0.5");
    CHECK(told.core.delivery_limit() == std::nullopt);
}

TEST_CASE("fault: delivery limit 20 (RabbitMQ 4.0): a job that arrives 15 returns in is renewed by a confirmed copy") {
    harness h(limited(std::nullopt));
    h.core.broker_identified("4.0.5");
    const auto gen = h.subscribe();
    // Returned 14 times: even faults that return it twice each leave room.
    deliver_counted(h, gen, 1, 1s, 14);
    CHECK(h.take<action::publish>().empty());
    CHECK(h.queue.size() == 1);
    // Returned 15 times: renewed with a margin (a killed worker returns a
    // job once or twice; the 21st return drops it).
    const auto due = h.clock.wall_now() + 1s;
    deliver_counted(h, gen, 2, 1s, 15);
    CHECK(h.queue.size() == 1);  // not held: renewed
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].exchange.empty());
    CHECK(ps[0].routing_key == "jobs");
    CHECK(ps[0].message.properties.message_id == "job-2");
    CHECK(ps[0].message.properties.headers->find("x-delivery-count") == nullptr);
    const auto at = due_header(ps[0].message);
    REQUIRE(at);
    CHECK(*at == doctest::Approx(std::chrono::duration<double>(due.time_since_epoch()).count()).epsilon(1e-9));
    CHECK(h.take<action::ack>().empty());  // not before its copy is confirmed
    CHECK(h.take<action::nack>().empty());
    h.core.copy_confirmed(ps[0].publish_id, h.now());
    auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == 2);
    const auto ev = h.events(job_event::kind::requeued);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].reason == "delivery-limit");
    CHECK(h.counters.requeued == 1);
    CHECK(h.counters.requeued_by_reason[requeue_label("delivery-limit")] == 1);
}

TEST_CASE("delivery limit: a renewed job due by a relative x-delay keeps its due time") {
    harness h(limited(3));
    const auto gen = h.subscribe();
    amqp::delivery d;
    d.delivery_tag = 1;
    d.msg.properties.message_id = "relative";
    d.msg.properties.headers.emplace();
    d.msg.properties.headers->set("x-delay", std::int64_t{1500});  // from arrival: none given
    d.msg.properties.headers->set("x-delivery-count", std::int64_t{2});
    const auto due = h.clock.wall_now() + 1500ms;
    h.core.delivery(0, gen, std::move(d), h.now());
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    // Counted from its next arrival, x-delay would start again: it goes as
    // an absolute due time instead.
    CHECK(ps[0].message.properties.headers->find("x-delay") == nullptr);
    const auto at = due_header(ps[0].message);
    REQUIRE(at);
    CHECK(*at == doctest::Approx(std::chrono::duration<double>(due.time_since_epoch()).count()).epsilon(1e-9));
}

TEST_CASE("delivery limit: a fresh copy (no count) is never renewed again, even with limit 1") {
    harness h(limited(1));
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 1s, std::nullopt);
    deliver_counted(h, gen, 2, 1s, 0);  // RabbitMQ 3.10's first delivery
    CHECK(h.take<action::publish>().empty());
    CHECK(h.queue.size() == 2);
}

TEST_CASE("delivery limit: RabbitMQ 3.10 and a limit told 0 renew nothing and give back by nacks") {
    for (const bool told_none : {false, true}) {
        harness h(limited(told_none ? std::optional<std::uint32_t>(0) : std::nullopt));
        h.core.broker_identified(told_none ? "4.0.5" : "3.10.8");
        const auto gen = h.subscribe();
        deliver_counted(h, gen, 1, 0ms, 40);
        CHECK(h.take<action::publish>().empty());
        auto j = h.pop();
        REQUIRE(j);
        h.finish(std::move(*j), job_outcome::requeue());
        CHECK(h.take<action::nack>().size() == 1);
        CHECK(h.take<action::publish>().empty());
    }
}

TEST_CASE("delivery limit: further from the limit, a give-back is a nack") {
    harness h(limited(3));
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 0ms, 1);
    auto j = h.pop();
    REQUIRE(j);
    h.finish(std::move(*j), job_outcome::requeue());
    CHECK(h.take<action::nack>().size() == 1);
    CHECK(h.take<action::publish>().empty());
}

TEST_CASE("fault: delivery limit 1: a first delivery (no count yet) is given back by a confirmed copy, never a nack") {
    harness h(limited(1));
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 0ms, std::nullopt);
    auto j = h.pop();
    REQUIRE(j);
    h.finish(std::move(*j), job_outcome::requeue());
    CHECK(h.take<action::nack>().empty());
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].routing_key == "jobs");  // back to the work queue, at its tail
    CHECK(ps[0].message.properties.headers->find("perform_job_at") != nullptr);
    CHECK(h.take<action::ack>().empty());
    h.core.copy_confirmed(ps[0].publish_id, h.now());
    REQUIRE(h.take<action::ack>().size() == 1);
    const auto ev = h.events(job_event::kind::requeued);
    REQUIRE(ev.size() == 1);
    CHECK(ev[0].reason == "handler");
}

TEST_CASE("fault: delivery limit at stop: a renewal awaiting its confirm is covered by no multiple nack") {
    harness h(limited(2));
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 1s, std::nullopt);
    deliver_counted(h, gen, 2, 1s, 1);  // at the limit: renewed, its copy not yet confirmed
    deliver_counted(h, gen, 3, 1s, std::nullopt);
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    h.core.stop(h.now());
    h.core.give_back(h.queue.drain(), h.now());
    auto nacks = h.take<action::nack>();
    REQUIRE(nacks.size() == 2);
    for (const auto& n : nacks) {
        CHECK_FALSE(n.multiple);
        CHECK(n.tag != 2);
    }
    h.core.copy_confirmed(ps[0].publish_id, h.now());
    auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == 2);
    CHECK(h.events(job_event::kind::requeued).size() == 3);
}

TEST_CASE("fault: delivery limit 1: a due backlog past its deadline is given back by a copy") {
    subscription_options o = limited(1);
    harness h(o);
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 0ms, std::nullopt);  // due; no worker takes it
    h.advance(o.broker_consumer_timeout);
    CHECK(h.take<action::nack>().empty());
    auto ps = h.take<action::publish>();
    REQUIRE(ps.size() == 1);
    CHECK(ps[0].routing_key == "jobs");
}

TEST_CASE("fault: a renewal copy refused again and again is never nacked: published again until confirmed") {
    subscription_options o = limited(std::nullopt);
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    h.core.broker_identified("4.0.5");
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 1s, 19);
    // Refused for twice the broker's consumer_timeout: past the point where
    // any other copy's original is given back by a nack.
    unsigned published = 0;
    for (auto t = 0ms; t < 2 * o.broker_consumer_timeout; t += 500ms) {
        auto ps = h.take<action::publish>();
        published += static_cast<unsigned>(ps.size());
        for (auto& p : ps)
            h.core.copy_refused(p.publish_id, amqp::make_error_code(amqp::errc::publish_nacked), 0, h.now());
        h.advance(500ms);
    }
    CHECK(published >= 5);
    CHECK(h.take<action::nack>().empty());
    CHECK(h.take<action::ack>().empty());
    CHECK(h.events(job_event::kind::failed).size() >= 5);
    // It goes through at last: the original is acked, nothing was lost.
    auto ps = h.take<action::publish>();
    for (int i = 0; i < 4 && ps.empty(); ++i) {
        h.advance(500ms);
        ps = h.take<action::publish>();
    }
    REQUIRE(ps.size() == 1);
    h.core.copy_confirmed(ps[0].publish_id, h.now());
    auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == 1);
    CHECK(h.core.copies_pending() == 0);
}

TEST_CASE("fault: stop() with a renewal copy refused: it is published again, never nacked") {
    subscription_options o = limited(std::nullopt);
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    h.core.broker_identified("4.0.5");
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 1s, 19);
    refuse_all(h);
    h.core.stop(h.now());
    h.core.give_back(h.queue.drain(), h.now());
    CHECK(h.take<action::nack>().empty());
    // Another copy at once (stop() does not wait out the pause), and the
    // delivery stays unsettled until one is confirmed or the channel closes.
    CHECK(h.take<action::publish>().size() == 1);
    CHECK(h.core.copies_pending() == 1);
    h.advance(3s);
    CHECK(h.take<action::nack>().empty());
}

TEST_CASE("other copies' originals one return from the limit are not nacked either when their copy keeps failing") {
    subscription_options o = limited(1);
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    const auto gen = h.subscribe();
    deliver_counted(h, gen, 1, 0ms, std::nullopt);  // limit 1: any return is its last
    auto j = h.pop();
    REQUIRE(j);
    h.finish(std::move(*j), job_outcome::failure("boom"));  // a retry copy
    for (auto t = 0ms; t < 2 * o.broker_consumer_timeout; t += 500ms) {
        refuse_all(h);
        h.advance(500ms);
    }
    CHECK(h.take<action::nack>().empty());
    CHECK(h.core.copies_pending() == 1);
}

TEST_CASE("fault: copies refused while the copies connection was down go out again as soon as it is back") {
    // A lost connection returns the jobs, which come back one return from
    // the limit, before the copies connection is back: every renewal copy
    // is refused "not connected", and the pause would grow with each.
    subscription_options o = limited(std::nullopt);
    o.republish_backoff = retry::backoff_policy::exponential(1s, 2.0, 30s);
    harness h(o);
    h.core.broker_identified("4.0.5");
    const auto gen = h.subscribe();
    for (std::uint64_t tag = 1; tag <= 50; ++tag) deliver_counted(h, gen, tag, 1s, 16);
    auto first = h.take<action::publish>();
    REQUIRE(first.size() == 50);
    for (auto& p : first)
        h.core.copy_refused(p.publish_id, amqp::make_error_code(amqp::errc::not_connected), 0, h.now());
    // The pauses grew with the refusals in a row: within a second only the
    // first few go out again.
    h.clock.advance(1s);
    h.core.tick(h.now());
    auto soon = h.take<action::publish>();
    CHECK(soon.size() < 5);
    h.core.copies_connected(h.now());
    auto again = h.take<action::publish>();
    CHECK(again.size() + soon.size() == 50);
    for (auto& p : again) h.core.copy_confirmed(p.publish_id, h.now());
    for (auto& p : soon) h.core.copy_confirmed(p.publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 50);
    CHECK(h.take<action::nack>().empty());
}
