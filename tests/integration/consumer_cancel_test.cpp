// Cancel and reschedule, end to end on the real broker: tombstones written
// by tarry::publisher, read by the consumer from the queue's control stream
// and honoured at admission and at release. Each job runs at most once, at
// the last time asked for, never early; a cancelled one is acked unrun.
// A schedule's removal drops its occurrence the same way.
#include "consumer_fixture.hpp"
#include "control_entries.hpp"
#include "tcp_relay.hpp"

#include "tarry/periodic/occurrence.hpp"
#include "tarry/publisher/publisher.hpp"

#include <set>

using namespace consumer_it;

namespace {

/// Publishes job `id` due at `at` through `pub` (so it carries a generation).
void publish_job(tarry::publisher& pub, const std::string& q, const std::string& id, sys::time_point at) {
    amqp::message m("job " + id);
    m.properties.message_id = id;
    ok(pub.async_publish("", q, std::move(m), tarry::job_schedule::at(at), use_future));
}

/// The runs of `id` so far.
std::vector<job_event> runs_of(running_consumer& rc, const std::string& id) {
    std::vector<job_event> out;
    for (auto& e : rc.log.of(kind::run))
        if (e.id == id) out.push_back(e);
    return out;
}

/// Waits until `id` has a `cancelled` event (at most `t`).
bool wait_cancelled(running_consumer& rc, const std::string& id, std::chrono::milliseconds t = 10s) {
    const auto end = std::chrono::steady_clock::now() + t;
    while (std::chrono::steady_clock::now() < end) {
        if (rc.log.find(kind::cancelled, id)) return true;
        std::this_thread::sleep_for(20ms);
    }
    return false;
}

}  // namespace

TEST_CASE("cancel a held job, and one published by another client (no generation): acked, never run") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("cancel-held"));
    running_consumer rc(url, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    const auto t0 = sys::now();
    publish_job(pub, o.queue, "held", t0 + 2500ms);
    publish_raw(confirm_channel(c), o.queue, "foreign", {{"perform_job_at", epoch(t0 + 2500ms)}});
    publish_job(pub, o.queue, "kept", t0 + 2500ms);
    REQUIRE(wait_held(rc, 3));
    ok(pub.async_cancel(o.queue, "held", use_future));
    ok(pub.async_cancel(o.queue, "foreign", use_future));
    ok(pub.async_cancel(o.queue, "nobody", use_future));  // unknown: nothing happens
    CHECK(wait_cancelled(rc, "held"));
    CHECK(wait_cancelled(rc, "foreign"));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 5s));
    CHECK(runs_of(rc, "held").empty());
    CHECK(runs_of(rc, "foreign").empty());
    CHECK(runs_of(rc, "kept").size() == 1);
    const auto cancelled = rc.log.find(kind::cancelled, "held");
    REQUIRE(cancelled);
    CHECK(cancelled->at >= t0 + 2500ms);  // found at release: it was held when the cancel came
    rc.worker.stop();
    CHECK(rc.worker.stats().cancelled == 2);
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
    cleanup(c, o);
}

TEST_CASE("reschedule later, then earlier than at first, quickly: the job runs once, at the last time asked for") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("reschedule"));
    running_consumer rc(url, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    const auto t0 = sys::now();
    publish_job(pub, o.queue, "moved", t0 + 2500ms);
    REQUIRE(wait_held(rc, 1));
    ok(pub.async_reschedule(o.queue, "moved", tarry::job_schedule::at(t0 + 4s), amqp::message("later"), use_future));
    const auto last = t0 + 1500ms;  // earlier than the first due time
    ok(pub.async_reschedule(o.queue, "moved", tarry::job_schedule::at(last), amqp::message("last"), use_future));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    std::this_thread::sleep_until(t0 + 4500ms);  // past the other copies' due times
    const auto runs = runs_of(rc, "moved");
    REQUIRE(runs.size() == 1);
    // perform_job_at is a double, read rounded up to the microsecond.
    CHECK(runs[0].due >= last - 1us);
    CHECK(runs[0].due - last <= 2us);
    CHECK(runs[0].at >= last);
    CHECK(rc.log.count(kind::cancelled) == 2);  // the original and the first reschedule's copy
    rc.worker.stop();
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
    cleanup(c, o);
}

TEST_CASE("a consumer started after the tombstone reads it before consuming: a job due now never runs") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("cancel-before-start"));
    auto declared = queue_opts(o.queue);
    declared.durable = true;  // as the consumer declares it
    value_of(c.open_channel().async_declare_queue(declared, use_future));
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    publish_job(pub, o.queue, "due-now", sys::now());
    ok(pub.async_cancel(o.queue, "due-now", use_future));
    publish_job(pub, o.queue, "runs", sys::now());
    running_consumer rc(url, o);
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    CHECK(wait_cancelled(rc, "due-now", 2s));
    CHECK(runs_of(rc, "due-now").empty());
    CHECK(runs_of(rc, "runs").size() == 1);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("a running job is not interrupted: the handler can see the cancel, its success says so") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("cancel-running"));
    std::promise<void> started;
    std::atomic<bool> saw{false};
    running_consumer rc(url, o, [&](const tarry::job& j) {
        started.set_value();
        for (int i = 0; i < 500 && !j.cancel_requested(); ++i) std::this_thread::sleep_for(10ms);
        saw = j.cancel_requested();
        return tarry::job_outcome::success();
    });
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    publish_job(pub, o.queue, "running", sys::now());
    REQUIRE(started.get_future().wait_for(10s) == std::future_status::ready);
    ok(pub.async_cancel(o.queue, "running", use_future));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    CHECK(saw.load());
    const auto done = rc.log.find(kind::succeeded, "running");
    REQUIRE(done);
    CHECK(done->cancel_requested);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("fault: the connection is cut, then a cancel is written: the reconnected consumer reads on and drops it") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto relay = relay_to(url);
    const auto cfg = through(relay, url, 300ms);
    auto o = options_for(unique_name("cancel-cut"));
    running_consumer rc(cfg, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    ok(pub.async_cancel(o.queue, "warm-up", use_future));  // the stream exists; the consumer attaches
    const auto t0 = sys::now();
    publish_job(pub, o.queue, "cut", t0 + 3s);
    publish_job(pub, o.queue, "kept", t0 + 3s);
    REQUIRE(wait_held(rc, 2));
    relay.cut_all();
    ok(pub.async_cancel(o.queue, "cut", use_future));
    CHECK(wait_cancelled(rc, "cut", 10s));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    CHECK(runs_of(rc, "cut").empty());
    CHECK(runs_of(rc, "kept").size() == 1);
    CHECK(rc.connections_lost() >= 1);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("read_control_stream off: cancels are ignored, the job runs") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("cancel-off"));
    o.read_control_stream = false;
    running_consumer rc(url, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    publish_job(pub, o.queue, "ignored", sys::now() + 1500ms);
    REQUIRE(wait_held(rc, 1));
    ok(pub.async_cancel(o.queue, "ignored", use_future));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    CHECK(runs_of(rc, "ignored").size() == 1);
    CHECK(rc.log.count(kind::cancelled) == 0);
    rc.worker.stop();
    cleanup(c, o);
}

TEST_CASE("cancel a parked job: dropped when it comes back from its wait queue; a finished job: nothing happens") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("cancel-parked"));
    o.hold_horizon = 2s;
    running_consumer rc(url, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    publish_job(pub, o.queue, "done", sys::now());
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    ok(pub.async_cancel(o.queue, "done", use_future));  // already done: nothing to drop
    publish_job(pub, o.queue, "parked", sys::now() + 5s);
    publish_job(pub, o.queue, "parked-kept", sys::now() + 5s);
    REQUIRE(rc.log.wait_count(kind::parked, 2, 10s));
    ok(pub.async_cancel(o.queue, "parked", use_future));
    CHECK(wait_cancelled(rc, "parked", 15s));
    REQUIRE(rc.log.wait_count(kind::succeeded, 2, 15s));
    CHECK(runs_of(rc, "parked").empty());
    CHECK(runs_of(rc, "parked-kept").size() == 1);
    CHECK(runs_of(rc, "done").size() == 1);
    CHECK_FALSE(rc.log.find(kind::cancelled, "done"));
    rc.worker.stop();
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
    cleanup(c, o);
}

TEST_CASE("reschedule across a worker restart: the next worker runs the job once, at the new time") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("reschedule-restart"));
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    auto first = std::make_unique<running_consumer>(url, o);
    publish_job(pub, o.queue, "restarted", sys::now() + 1500ms);
    REQUIRE(wait_held(*first, 1));
    first->worker.stop();  // gives the held job back
    CHECK(first->log.count(kind::run) == 0);
    first.reset();
    const auto later = sys::now() + 2500ms;
    ok(pub.async_reschedule(o.queue, "restarted", tarry::job_schedule::at(later), amqp::message("moved"), use_future));
    running_consumer second(url, o);
    REQUIRE(second.log.wait_count(kind::succeeded, 1, 10s));
    std::this_thread::sleep_for(500ms);
    const auto runs = runs_of(second, "restarted");
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].due >= later - 1us);
    CHECK(runs[0].at >= runs[0].due);
    CHECK(second.log.count(kind::cancelled) == 1);  // the original copy, given back by the first worker
    second.worker.stop();
    cleanup(c, o);
}

namespace {

/// A schedule every minute whose first occurrence is due `in` from now.
tarry::periodic::schedule_spec minute_due_in(std::chrono::milliseconds in) {
    const auto due = std::chrono::duration_cast<std::chrono::milliseconds>((sys::now() + in).time_since_epoch());
    tarry::periodic::schedule_spec s;
    s.when = tarry::periodic::every_interval{60s, std::chrono::milliseconds(due.count() % 60000)};
    return s;
}

/// The occurrence `schedule` has held, once there is one (at most 10 s).
std::optional<std::string> held_occurrence(running_consumer& rc, const std::string& schedule) {
    const auto end = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < end) {
        std::error_code ec;
        const auto page = rc.worker.held_jobs(10, "", ec);
        for (const auto& j : page.jobs)
            if (j.id.rfind(schedule + "@", 0) == 0) return j.id;
        std::this_thread::sleep_for(20ms);
    }
    return std::nullopt;
}

}  // namespace

TEST_CASE("fault: a schedule removed while its occurrence is held: the occurrence is acked unrun when it falls due") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("schedule-remove"));
    running_consumer rc(url, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    ok(pub.async_upsert_schedule(o.queue, "tick", minute_due_in(2500ms), amqp::message("beat"), use_future));
    const auto id = held_occurrence(rc, "tick");
    REQUIRE(id);
    ok(pub.async_remove_schedule(o.queue, "tick", use_future));
    CHECK(wait_cancelled(rc, *id));
    CHECK(runs_of(rc, *id).empty());
    rc.worker.stop();
    CHECK(rc.worker.stats().cancelled == 1);
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
    cleanup(c, o);
}

TEST_CASE("a removal reaches a running consumer within 200 ms: an occurrence due 300 ms after it is dropped") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("schedule-remove-fast"));
    running_consumer rc(url, o);
    control_stream_cleanup stream{c, o.queue};
    tarry::publisher pub(c.conn);
    // The stream exists before the consumer's next look (it looks every second).
    ok(pub.async_upsert_schedule(o.queue, "early", minute_due_in(30s), amqp::message("-"), use_future));
    std::this_thread::sleep_for(1500ms);
    for (int round = 0; round < 5; ++round) {
        const std::string schedule = "fast-" + std::to_string(round);
        ok(pub.async_upsert_schedule(o.queue, schedule, minute_due_in(2000ms), amqp::message("beat"), use_future));
        const auto id = held_occurrence(rc, schedule);
        REQUIRE(id);
        const auto due = tarry::periodic::parse_nominal(id->substr(id->find('@') + 1));
        REQUIRE(due);
        std::this_thread::sleep_until(*due - 300ms);
        ok(pub.async_remove_schedule(o.queue, schedule, use_future));
        CHECK_MESSAGE(wait_cancelled(rc, *id), *id);
        CHECK(runs_of(rc, *id).empty());
    }
    rc.worker.stop();
    cleanup(c, o);
}
