// Cancellation in the consumer core, fault by fault on a fake clock: a
// tombstone (the harness's fake_cancels) covering a job when it is
// admitted, when it falls due, and while it runs.
#include "core_harness.hpp"
#include "message_copies.hpp"

#include "tarry/contract/occurrence_headers.hpp"

using namespace core_test;

namespace {

/// The one ack collected, of `tag`.
void check_acked(harness& h, std::uint64_t tag) {
    const auto acks = h.take<action::ack>();
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].tag == tag);
}

}  // namespace

TEST_CASE("fault: a delivery a tombstone covers is acked at admission without running or parking") {
    harness h;
    const auto gen = h.subscribe();
    h.cancels.below["job-1"] = 100;
    h.cancels.below["job-2"] = 100;
    h.cancels.below["job-3"] = 100;
    h.deliver(0, gen, 1, 500ms, "job-1", 50);   // would be held
    h.deliver(0, gen, 2, std::nullopt, "job-2");  // due now; generation 0 (another client's)
    h.deliver(0, gen, 3, 60s, "job-3", 99);     // would be parked
    CHECK(h.queue.size() == 0);
    CHECK(h.take<action::publish>().empty());
    CHECK(h.take<action::ack>().size() == 3);
    const auto cancelled = h.events(job_event::kind::cancelled);
    REQUIRE(cancelled.size() == 3);
    CHECK(cancelled[0].id == "job-1");
    CHECK_FALSE(cancelled[0].cancel_requested);
    CHECK(cancelled[0].reason.find("tombstone") != std::string::npos);
    CHECK(h.counters.cancelled == 3);
    CHECK(h.counters.fast_path == 0);
    CHECK(h.core.lanes()[0].unsettled == 0);
}

TEST_CASE("a tombstone spares the job's newer copies (a reschedule's) and every other job") {
    harness h;
    const auto gen = h.subscribe();
    h.cancels.below["job-1"] = 100;
    h.deliver(0, gen, 1, 500ms, "job-1", 100);  // the reschedule's own copy
    h.deliver(0, gen, 2, 500ms, "job-1", 101);
    h.deliver(0, gen, 3, 500ms, "job-9", 1);
    CHECK(h.queue.size() == 3);
    CHECK(h.take<action::ack>().empty());
    CHECK(h.counters.cancelled == 0);
}

TEST_CASE("fault: a cancelled job with a schedule it cannot read is acked as cancelled, not dead-lettered") {
    harness h;
    const auto gen = h.subscribe();
    h.cancels.below["bad"] = 100;
    amqp::delivery d;
    d.delivery_tag = 1;
    d.msg.properties.message_id = "bad";
    d.msg.properties.headers.emplace();
    d.msg.properties.headers->set("perform_job_at", std::string("not a time"));
    h.core.delivery(0, gen, std::move(d), h.now());
    CHECK(h.take<action::publish>().empty());
    check_acked(h, 1);
    CHECK(h.events(job_event::kind::cancelled).size() == 1);
}

TEST_CASE("fault: a tombstone read while the job is held: handed back at release, acked, never run") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 500ms, "job-1", 50);
    CHECK(h.queue.size() == 1);
    h.cancels.below["job-1"] = 100;  // read meanwhile
    h.clock.advance(500ms);
    auto j = h.pop();
    REQUIRE(j);
    // What the worker does when it finds the job covered (consumer_workers.cpp).
    h.core.finished({std::move(*j), finished_job::result::cancelled, std::nullopt, h.clock.wall_now()}, h.now());
    check_acked(h, 1);
    CHECK(h.events(job_event::kind::cancelled).size() == 1);
    CHECK(h.events(job_event::kind::run).empty());
    CHECK(h.counters.cancelled == 1);
}

TEST_CASE("fault: a cancelled hand-back whose channel was lost meanwhile is dropped, not acked") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, 500ms, "job-1", 50);
    h.clock.advance(500ms);
    auto j = h.pop();
    REQUIRE(j);
    h.core.connection_lost("cut", h.now());
    h.collect();
    h.core.finished({std::move(*j), finished_job::result::cancelled, std::nullopt, h.clock.wall_now()}, h.now());
    CHECK(h.take<action::ack>().empty());
    CHECK(h.events(job_event::kind::dropped).size() == 1);
    CHECK(h.counters.cancelled == 0);
}

TEST_CASE("fault: a cancel read while a job ran: a failure is not retried; a success stands, flagged") {
    harness h;
    const auto gen = h.subscribe();
    h.deliver(0, gen, 1, std::nullopt, "fails", 50);
    h.deliver(0, gen, 2, std::nullopt, "succeeds", 50);
    auto a = h.pop();
    auto b = h.pop();
    REQUIRE(a);
    REQUIRE(b);
    h.cancels.below["fails"] = 100;
    h.cancels.below["succeeds"] = 100;
    h.finish(std::move(*a), job_outcome::failure("boom"));
    CHECK(h.take<action::publish>().empty());  // no retry copy
    check_acked(h, 1);
    auto cancelled = h.events(job_event::kind::cancelled);
    REQUIRE(cancelled.size() == 1);
    CHECK(cancelled[0].cancel_requested);
    CHECK(h.counters.retried == 0);

    h.finish(std::move(*b), job_outcome::success());
    check_acked(h, 2);
    auto ok = h.events(job_event::kind::succeeded);
    REQUIRE(ok.size() == 1);
    CHECK(ok[0].cancel_requested);
    CHECK(h.counters.succeeded == 1);
    CHECK(h.counters.cancelled == 1);
}

TEST_CASE("a failure nobody cancelled is retried as before, its success unflagged") {
    harness h;
    const auto gen = h.subscribe();
    h.cancels.below["other"] = 100;  // tombstones exist, none for these
    h.deliver(0, gen, 1, std::nullopt, "fails", 50);
    h.deliver(0, gen, 2, std::nullopt, "succeeds", 50);
    auto a = h.pop();
    auto b = h.pop();
    h.finish(std::move(*a), job_outcome::failure("boom"));
    CHECK(h.take<action::publish>().size() == 1);
    h.finish(std::move(*b), job_outcome::success());
    auto ok = h.events(job_event::kind::succeeded);
    REQUIRE(ok.size() == 1);
    CHECK_FALSE(ok[0].cancel_requested);
}

TEST_CASE("a replayed dead letter gets a new generation: a tombstone written before the replay spares it") {
    amqp::message letter("job");
    letter.properties.message_id = "job-1";
    letter.properties.headers.emplace();
    letter.properties.headers->set("x-tarry-attempt", std::int64_t{3});
    letter.properties.headers->set("x-tarry-reason", std::string("attempts-exhausted: boom"));
    letter.properties.headers->set("x-tarry-generation", std::int64_t{100});
    letter.properties.headers->set("tenant", std::string("acme"));
    const auto now = wall_time(std::chrono::microseconds(1'795'620'000'000'000));
    const auto copy = replay_copy(letter, now);
    // contract::next_generation: the replay's time in µs, or above a later
    // generation this process gave before.
    CHECK(contract::read_generation(copy.properties) >= 1'795'620'000'000'000u);
    CHECK(contract::read_attempt(copy.properties) == 1);
    CHECK(copy.properties.headers->find("x-tarry-reason") == nullptr);
    CHECK(copy.properties.headers->find("tenant") != nullptr);
    fake_cancels cancels;
    cancels.below["job-1"] = 1'795'610'000'000'000;  // written before the replay
    CHECK_FALSE(cancels.cancelled("job-1", contract::read_generation(copy.properties), now));
}

TEST_CASE("fault: an occurrence of a schedule upserted again or removed is acked at admission, or when it falls "
          "due, never run; its job id is not a tombstone's") {
    harness h;
    const auto gen = h.subscribe();
    const auto occurrence = [&](std::uint64_t tag, std::chrono::milliseconds in, std::uint64_t generation) {
        amqp::delivery d;
        d.delivery_tag = tag;
        contract::write_occurrence(d.msg.properties,
                                   {"tick", std::to_string(1795500000 + tag), "every 1000ms", 1, "copy"});
        contract::write_schedule(d.msg.properties, h.clock.wall_now() + in, h.clock.wall_now());
        contract::write_generation(d.msg.properties, generation);
        d.msg.body = {'x'};
        h.core.delivery(0, gen, std::move(d), h.now());
    };
    h.cancels.schedules_below["tick"] = 100;
    occurrence(1, 500ms, 99);   // the old chain's: dropped at admission
    occurrence(2, 500ms, 100);  // the upsert's own chain: held
    CHECK(h.queue.size() == 1);
    check_acked(h, 1);
    const auto dropped = h.events(job_event::kind::cancelled);
    REQUIRE(dropped.size() == 1);
    CHECK(dropped[0].id == "tick@1795500001");

    // A removal read while the newer one is held: dropped when it falls due.
    h.cancels.schedules_below["tick"] = 200;
    h.clock.advance(500ms);
    auto j = h.pop();
    REQUIRE(j);
    h.core.finished({std::move(*j), finished_job::result::cancelled, std::nullopt, h.clock.wall_now()}, h.now());
    check_acked(h, 2);
    CHECK(h.counters.cancelled == 2);
    CHECK(h.counters.started == 0);
}
