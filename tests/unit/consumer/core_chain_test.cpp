// Periodic occurrences in the consumer core, on a fake clock: running one
// publishes its successor (docs/periodic.md), and the occurrence is settled
// only once the successor is confirmed, however its handler ended.
#include "core_harness.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/periodic/occurrence.hpp"

using namespace core_test;

namespace {

using namespace std::chrono;

/// The nominal time of `every 1000ms` at or before now.
wall_time grid_now(harness& h) { return floor<seconds>(h.clock.wall_now()); }

/// Delivers occurrence `number` of schedule "tick" (`spec`), nominal `nominal`.
void deliver_occurrence(harness& h, std::uint32_t gen, std::uint64_t tag, wall_time nominal,
                        const std::string& spec = "every 1000ms", std::uint64_t number = 1,
                        std::uint32_t attempt = 1) {
    amqp::delivery d;
    d.delivery_tag = tag;
    contract::occurrence_headers o{"tick", periodic::format_nominal(nominal), spec, number, "copy-" + std::to_string(tag)};
    contract::write_occurrence_copy(d.msg.properties, o, nominal, 500, h.clock.wall_now());
    if (attempt > 1) d.msg.properties.headers->set(std::string(contract::attempt_header), std::int64_t{attempt});
    d.msg.body = {'b'};
    h.core.delivery(0, gen, std::move(d), h.now());
}

held_job run_next(harness& h) {
    auto j = h.pop();
    REQUIRE(j);
    return std::move(*j);
}

}  // namespace

TEST_CASE("an occurrence that succeeded: its successor is published and confirmed first, then it is acked") {
    harness h;
    const auto gen = h.subscribe();
    const auto nominal = grid_now(h);
    deliver_occurrence(h, gen, 1, nominal);
    h.finish(run_next(h), job_outcome::success());
    CHECK(h.take<action::ack>().empty());  // not before the successor is confirmed
    auto pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);
    CHECK(pubs[0].exchange.empty());
    CHECK(pubs[0].routing_key == "jobs");
    const auto& m = pubs[0].message;
    std::string why;
    const auto o = contract::read_occurrence(m.properties, why);
    REQUIRE_MESSAGE(o, why);
    CHECK(o->schedule_id == "tick");
    CHECK(o->nominal == periodic::format_nominal(nominal + 1s));  // from the nominal time: no drift
    CHECK(o->number == 2);
    CHECK(o->copy != "copy-1");
    CHECK(m.properties.message_id == std::optional<std::string>("tick@" + periodic::format_nominal(nominal + 1s)));
    CHECK(contract::read_generation(m.properties) == 500);  // the chain's generation
    CHECK(m.body == std::vector<std::uint8_t>{'b'});
    CHECK(h.events(job_event::kind::succeeded).empty());

    h.core.copy_confirmed(pubs[0].publish_id, h.now());
    const auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == 1);
    const auto scheduled = h.events(job_event::kind::scheduled);
    REQUIRE(scheduled.size() == 1);
    CHECK(scheduled[0].next_due == nominal + 1s);
    CHECK(h.events(job_event::kind::succeeded).size() == 1);
    CHECK(h.counters.scheduled == 1);
    CHECK(h.counters.succeeded == 1);
}

TEST_CASE("an occurrence that failed: the successor first, then the retry copy, whose run publishes none") {
    harness h;
    const auto gen = h.subscribe();
    const auto nominal = grid_now(h);
    deliver_occurrence(h, gen, 1, nominal);
    h.finish(run_next(h), job_outcome::failure("boom"));
    auto pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);  // the successor alone, so far
    h.core.copy_confirmed(pubs[0].publish_id, h.now());
    CHECK(h.events(job_event::kind::scheduled).size() == 1);
    pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);  // now the retry copy
    CHECK(contract::read_attempt(pubs[0].message.properties) == 2);
    CHECK(h.take<action::ack>().empty());
    h.core.copy_confirmed(pubs[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.events(job_event::kind::retry).size() == 1);

    // The retry, delivered and run: settled as a job; no second successor.
    deliver_occurrence(h, gen, 2, nominal, "every 1000ms", 1, 2);
    h.finish(run_next(h), job_outcome::success());
    CHECK(h.take<action::publish>().empty());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.counters.scheduled == 1);
}

TEST_CASE("fault: the successor refused: the occurrence stays unacked and the successor is published again") {
    subscription_options o = small_options();
    o.broker_consumer_timeout = 60s;
    o.republish_backoff = retry::backoff_policy::fixed(1s);
    harness h(o);
    const auto gen = h.subscribe();
    deliver_occurrence(h, gen, 1, grid_now(h));
    h.finish(run_next(h), job_outcome::success());
    auto pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);
    h.core.copy_refused(pubs[0].publish_id, make_error_code(amqp::errc::publish_nacked), 131072, h.now());
    CHECK(h.take<action::ack>().empty());
    CHECK(h.events(job_event::kind::failed).size() == 1);
    h.advance(1s);
    pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);
    std::string why;
    CHECK(contract::read_occurrence(pubs[0].message.properties, why)->number == 2);
    h.core.copy_confirmed(pubs[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.counters.scheduled == 1);
}

TEST_CASE("no successor: a removed schedule, the chain's limit, a job that is no occurrence") {
    SUBCASE("its schedule was removed while it ran: acked, nothing published") {
        harness h;
        const auto gen = h.subscribe();
        deliver_occurrence(h, gen, 1, grid_now(h));
        auto j = run_next(h);
        h.cancels.schedules_below["tick"] = 501;
        h.finish(std::move(j), job_outcome::success());
        CHECK(h.take<action::publish>().empty());
        CHECK(h.take<action::ack>().size() == 1);
    }
    SUBCASE("the occurrence is the last its limit allows") {
        harness h;
        const auto gen = h.subscribe();
        deliver_occurrence(h, gen, 1, grid_now(h), "every 1000ms limit 3", 3);
        h.finish(run_next(h), job_outcome::success());
        CHECK(h.take<action::publish>().empty());
        CHECK(h.take<action::ack>().size() == 1);
    }
    SUBCASE("an id with '@' and no occurrence headers") {
        harness h;
        const auto gen = h.subscribe();
        h.deliver(0, gen, 1, std::nullopt, "user@example.org");
        h.finish(run_next(h), job_outcome::success());
        CHECK(h.take<action::publish>().empty());
        CHECK(h.take<action::ack>().size() == 1);
    }
}

TEST_CASE("a misfired occurrence (run once): the successor is the next nominal time after it ran, not after its own") {
    harness h;
    const auto gen = h.subscribe();
    const auto nominal = grid_now(h) - 3600s;  // an hour late: over the 60 s threshold
    deliver_occurrence(h, gen, 1, nominal, "every 60000ms");
    h.finish(run_next(h), job_outcome::success());
    auto pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);
    std::string why;
    const auto o = contract::read_occurrence(pubs[0].message.properties, why);
    REQUIRE(o);
    const auto next = periodic::parse_nominal(o->nominal);
    REQUIRE(next);
    CHECK(*next > h.clock.wall_now());
    CHECK(*next <= h.clock.wall_now() + 60s);
}

TEST_CASE("a misfired occurrence its policy skips (handed back unrun): the successor first, then acked, skipped") {
    harness h;
    const auto gen = h.subscribe();
    const auto nominal = grid_now(h) - 3600s;
    deliver_occurrence(h, gen, 1, nominal, "every 60000ms misfire skip");
    auto j = run_next(h);
    h.core.finished({std::move(j), finished_job::result::misfired, std::nullopt, h.clock.wall_now()}, h.now());
    CHECK(h.take<action::ack>().empty());
    auto pubs = h.take<action::publish>();
    REQUIRE(pubs.size() == 1);
    std::string why;
    const auto next = periodic::parse_nominal(contract::read_occurrence(pubs[0].message.properties, why)->nominal);
    REQUIRE(next);
    CHECK(*next > h.clock.wall_now());  // from now on, the missed ones skipped
    h.core.copy_confirmed(pubs[0].publish_id, h.now());
    CHECK(h.take<action::ack>().size() == 1);
    CHECK(h.events(job_event::kind::scheduled).size() == 1);
    const auto skipped = h.events(job_event::kind::skipped);
    REQUIRE(skipped.size() == 1);
    CHECK(skipped[0].reason.rfind("misfired", 0) == 0);
    CHECK(h.counters.skipped == 1);
    CHECK(h.counters.started == 0);
    CHECK(h.counters.succeeded == 0);
}

TEST_CASE("a misfired occurrence skipped at the end of its chain: acked at once, skipped; lost channel: dropped") {
    {
        harness h;
        const auto gen = h.subscribe();
        deliver_occurrence(h, gen, 1, grid_now(h) - 3600s, "every 60000ms limit 2 misfire skip", 2);
        h.core.finished({run_next(h), finished_job::result::misfired, std::nullopt, h.clock.wall_now()}, h.now());
        CHECK(h.take<action::publish>().empty());
        CHECK(h.take<action::ack>().size() == 1);
        CHECK(h.events(job_event::kind::skipped).size() == 1);
    }
    {
        harness h;
        const auto gen = h.subscribe();
        deliver_occurrence(h, gen, 1, grid_now(h) - 3600s, "every 60000ms misfire skip");
        auto j = run_next(h);
        h.core.lane_lost(0, gen, "test", h.now());
        h.core.finished({std::move(j), finished_job::result::misfired, std::nullopt, h.clock.wall_now()}, h.now());
        CHECK(h.take<action::publish>().empty());
        CHECK(h.take<action::ack>().empty());
        CHECK(h.events(job_event::kind::dropped).size() == 1);
    }
}
