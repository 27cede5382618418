// Bad input and parking against the real broker: each kind of bad schedule
// ends in the dead-letter queue with its reason; jobs beyond the hold
// horizon, or pushed out when the bounds are reached, are parked in wait
// queues and still run on time.
#include "consumer_fixture.hpp"
#include "private_broker.hpp"

#include <random>
#include <set>

using namespace consumer_it;

TEST_CASE("bad schedules are never run, never lost: dead-lettered with their reason") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("bad"));
    o.max_delay = 60s;
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto now = sys::now();
    amqp::basic_properties expiring;
    expiring.expiration = "1000";
    struct bad {
        std::string id;
        amqp::field_table headers;
        std::string reason_prefix;
        amqp::basic_properties props = {};
    };
    const std::vector<bad> cases{
        {"bool", {{"perform_job_at", true}}, "invalid-schedule: "},
        {"negative", {{"perform_job_at", -5.0}}, "invalid-schedule: "},
        {"garbage-string", {{"perform_job_at", "next tuesday"}}, "invalid-schedule: "},
        {"table", {{"perform_job_at", amqp::field_table{{"at", 1}}}}, "invalid-schedule: "},
        {"negative-x-delay", {{"x-delay", std::int32_t{-100}}}, "invalid-schedule: "},
        {"too-far", {{"perform_job_at", epoch(now + 120s)}}, "delay-exceeds-max: "},
        {"expires-first", {{"perform_job_at", epoch(now + 5s)}}, "expired-before-due: ", expiring},
    };
    for (const auto& b : cases) publish_raw(ch, o.queue, b.id, b.headers, b.props);
    publish_raw(ch, o.queue, "good", {{"perform_job_at", epoch(now + 500ms)}});
    REQUIRE(rc.log.wait_count(kind::dead, cases.size(), 15s));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 15s));
    for (const auto& b : cases) {
        CAPTURE(b.id);
        CHECK_FALSE(rc.log.find(kind::run, b.id));
        const auto dead = rc.log.find(kind::dead, b.id);
        REQUIRE(dead);
        CHECK(dead->reason.rfind(b.reason_prefix, 0) == 0);
    }
    rc.worker.stop();
    const auto stats = rc.worker.stats();
    CHECK(stats.received == cases.size() + 1);
    CHECK(stats.received == stats.succeeded + stats.dead_lettered);  // in = run + dead
    // The dead-letter queue holds each, with its reason and the original body.
    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == cases.size());
    std::set<std::string> ids;
    for (const auto& m : letters) {
        ids.insert(m.properties.message_id.value_or(""));
        CHECK(m.body_view() == "job " + m.properties.message_id.value_or(""));
        const auto reason = reason_of(m);
        CHECK((reason.rfind("invalid-schedule: ", 0) == 0 || reason.rfind("delay-exceeds-max: ", 0) == 0 ||
               reason.rfind("expired-before-due: ", 0) == 0));
    }
    CHECK(ids.size() == cases.size());
    cleanup(c, o);
}

TEST_CASE("parking: with a 2 s horizon a 6 s job parks, comes back and runs on time") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("park2"));
    o.hold_horizon = 2s;
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto due = sys::now() + 6s;
    publish_raw(ch, o.queue, "six", {{"perform_job_at", epoch(due)}});
    REQUIRE(rc.log.wait_count(kind::run, 1, 15s));
    const auto run = rc.log.of(kind::run).front();
    CHECK(run.at >= run.due);
    // perform_job_at is a double (about 0.24 µs apart at today's epoch),
    // read rounded up to the microsecond: within 1 µs + half a step.
    CHECK(run.due >= due - 1us);
    CHECK(run.due - due <= 2us);
    CHECK(lateness_ms(run) < late_ms);
    CHECK(rc.log.count(kind::parked) >= 1);
    CHECK(rc.worker.stats().channel_losses == 0);
    cleanup(c, o);
}

TEST_CASE("parking: with a 1 s horizon a 10 s job parks many times and still runs on time") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("park1"));
    o.hold_horizon = 1s;
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto due = sys::now() + 10s;
    // x-delay from arrival: the parked copies must keep the first due time.
    publish_raw(ch, o.queue, "ten", {{"x-delay", std::int32_t{10000}}});
    REQUIRE(rc.log.wait_count(kind::run, 1, 20s));
    const auto run = rc.log.of(kind::run).front();
    CHECK(run.at >= run.due);
    CHECK(run.due >= due - 200ms);
    CHECK(run.due <= due + 200ms);
    CHECK(lateness_ms(run) < late_ms);
    CHECK(rc.log.count(kind::parked) >= 5);  // each copy drops x-death, or the broker would drop it
    CHECK(rc.log.count(kind::dead) == 0);
    cleanup(c, o);
}

TEST_CASE("parking: with max_held 10 and 100 jobs, the latest-due are parked and all run on time") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("bounded"));
    o.max_held = 10;
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    std::vector<int> order(100);
    for (int i = 0; i < 100; ++i) order[static_cast<std::size_t>(i)] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937(11));
    const auto t0 = sys::now();
    // Job i is due at t0 + 4 s + 40 ms * i: ids sort by due time.
    for (const int i : order)
        publish_raw(ch, o.queue, "b" + std::to_string(1000 + i),
                    {{"perform_job_at", epoch(t0 + 4s + std::chrono::milliseconds(40 * i))}});
    REQUIRE(rc.log.wait_count(kind::run, 100, 30s));
    for (const auto& r : rc.log.of(kind::run)) {
        CAPTURE(r.id);
        CHECK(r.at >= r.due);
        CHECK(lateness_ms(r) < late_ms);
    }
    std::set<std::string> parked;
    for (const auto& p : rc.log.of(kind::parked)) parked.insert(p.id);
    // The 10 earliest were never parked; the others were (each once at least).
    for (int i = 0; i < 10; ++i) CHECK(parked.count("b" + std::to_string(1000 + i)) == 0);
    CHECK(parked.size() == 90);
    CHECK(rc.log.count(kind::dead) == 0);
    cleanup(c, o);
}

TEST_CASE("a hold horizon at or above the broker's consumer_timeout is refused with a clear error") {
    auto o = options_for("never-used");
    o.broker_consumer_timeout = 5s;
    o.hold_horizon = 5s;
    try {
        tarry::consumer w(amqp::connection_config{}, o, succeed);
        FAIL("the consumer accepted a hold horizon equal to the broker's consumer_timeout");
    } catch (const tarry::error& e) {
        CHECK(e.code() == std::errc::invalid_argument);
        CHECK(std::string(e.what()).find("before the broker's consumer_timeout") != std::string::npos);
    }
}

TEST_CASE("broker consumer_timeout 5 s: a job due in 20 s runs on time and no channel is closed") {
    tarry_test::private_broker broker({"--consumer-timeout-ms", "5000", "--tick-ms", "1000"});
    connected_client c(broker.url());
    auto o = options_for(unique_name("timeout"));
    o.broker_consumer_timeout = 5s;
    o.hold_horizon = 3s;
    running_consumer rc(broker.url(), o);
    auto ch = confirm_channel(c);
    const auto due = sys::now() + 20s;
    publish_raw(ch, o.queue, "twenty", {{"perform_job_at", epoch(due)}});
    REQUIRE(rc.log.wait_count(kind::run, 1, 30s));
    const auto run = rc.log.of(kind::run).front();
    CHECK(run.at >= run.due);
    CHECK(lateness_ms(run) < late_ms);
    CHECK(rc.log.count(kind::parked) >= 1);
    // Held for under 3 s at a time: the broker never had cause to close the channel.
    std::this_thread::sleep_for(1500ms);
    CHECK(rc.worker.stats().channel_losses == 0);
    CHECK(rc.log.count(kind::dropped) == 0);
}

TEST_CASE("with a dead-letter exchange set, dead letters go there, routed by the work queue's name") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto setup = c.open_channel();
    const auto x = unique_name("dlx");
    const auto sink = unique_name("dlx-sink");
    ok(setup.async_declare_exchange(exchange_opts(x, "direct"), use_future));
    value_of(setup.async_declare_queue(queue_opts(sink, false, true), use_future));
    auto o = options_for(unique_name("dlx-work"));
    ok(setup.async_bind_queue(sink, x, o.queue, {}, use_future));
    o.dead_letter_exchange = x;
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "bad", {{"perform_job_at", "never"}});
    REQUIRE(rc.log.wait_count(kind::dead, 1, 10s));
    rc.worker.stop();
    auto got = value_of(setup.async_get(sink, {.no_ack = true}, use_future));
    REQUIRE(got);
    CHECK(got->item.exchange == x);
    CHECK(got->item.routing_key == o.queue);
    CHECK(reason_of(got->item.msg).rfind("invalid-schedule: ", 0) == 0);
    // No <queue>.dead was declared.
    auto probe = c.open_channel();
    auto [ec, info] = wait(probe.async_declare_queue(passive_queue(o.dead_letter_queue_name()), use_future));
    CHECK(ec == amqp::reply_code::not_found);
    cleanup(c, o);
}
