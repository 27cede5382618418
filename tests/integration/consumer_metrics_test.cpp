// consumer::metrics(), health(), held_jobs() and async_ping() against the
// run's broker: the histograms count every run and handler, the counts by
// reason add up, the held jobs page in due order with their ids, the gauges
// follow what is held, and a stopped consumer says so and still answers a
// ping.
#include "consumer_fixture.hpp"

#include <boost/asio/use_future.hpp>

#include <numeric>

using namespace consumer_it;

namespace {
template <std::size_t N>
std::uint64_t total(const std::array<std::uint64_t, N>& a) {
    return std::accumulate(a.begin(), a.end(), std::uint64_t{0});
}
}  // namespace

TEST_CASE("health() is ready the moment start() has returned (it returns once consuming)") {
    // A race once: start() returned before the driver had recorded that its
    // lane consumes, and health() said "not consuming yet" for a moment
    // (echo_worker --systemd then sent READY=1 with that status).
    TARRY_REQUIRE_BROKER(url);
    auto o = options_for(unique_name("health-at-start"));
    o.workers = 1;
    connected_client admin(url);
    for (int round = 0; round < 40; ++round) {
        CAPTURE(round);
        running_consumer rc(url, o);
        const auto h = rc.worker.health();
        CHECK_MESSAGE(h.ready(), h.reason);
        rc.worker.stop();
    }
    cleanup(admin, o);
}

TEST_CASE("metrics, health and held jobs of a running consumer, then of a stopped one") {
    TARRY_REQUIRE_BROKER(url);
    auto o = options_for(unique_name("metrics"));
    o.hold_horizon = std::chrono::seconds(30);
    connected_client admin(url);
    cleanup(admin, o);
    std::optional<running_consumer> rc;
    rc.emplace(url, o, [](const tarry::job& j) {
        if (j.id() == "refuse") return tarry::job_outcome::reject("not this one");
        return tarry::job_outcome::success();
    });
    auto& worker = rc->worker;

    // Ready: both connections open, a lane consumes, and the I/O thread answers.
    const auto ready = [&] { return worker.health().ready(); };
    for (int i = 0; i < 500 && !ready(); ++i) std::this_thread::sleep_for(10ms);
    INFO("health: ", worker.health().reason);
    REQUIRE(ready());
    CHECK(worker.health().reason.empty());
    CHECK(worker.metrics().connected);
    auto ping = worker.async_ping(boost::asio::use_future);
    REQUIRE(ping.wait_for(5s) == std::future_status::ready);

    // Three jobs due now (one refused: a dead letter), one with a bad
    // schedule (a dead letter), four held for a while.
    const auto now = sys::now();
    publish_many(url, o.queue, "now", {now, now, now});
    {
        connected_client c(url);
        auto ch = confirm_channel(c);
        amqp::field_table bad;
        bad.set("perform_job_at", std::string("half past never"));
        publish_raw(ch, o.queue, "bad", bad);
        publish_raw(ch, o.queue, "refuse", {});
    }
    const auto later = now + 20s;
    auto held = publish_many(url, o.queue, "held", {later + 3s, later + 1s, later + 2s, later});
    REQUIRE(wait_stats(*rc, [](const tarry::consumer_stats& s) { return s.dead_lettered == 2 && s.held == 4; }));
    REQUIRE(wait_stats(*rc, [](const tarry::consumer_stats& s) { return s.succeeded == 3; }));

    const auto m = worker.metrics();
    CHECK(m.counters.started == 4);
    CHECK(m.start_lateness.count == m.counters.started);
    CHECK(m.handler_duration.count == 4);
    CHECK(total(m.dead_lettered_by_reason) == m.counters.dead_lettered);
    CHECK(m.dead_lettered_by_reason[0] == 1);  // invalid-schedule
    CHECK(m.dead_lettered_by_reason[5] == 1);  // rejected
    CHECK(total(m.requeued_by_reason) == m.counters.requeued);
    REQUIRE(m.recent_dead_letters.size() == 2);
    for (const auto& d : m.recent_dead_letters) {
        CHECK((d.id == "bad" || d.id == "refuse"));
        CHECK(d.at >= now);
    }
    CHECK(m.recent_dead_letters[0].at >= m.recent_dead_letters[1].at);  // newest first
    REQUIRE(m.next_due);
    // As the contract reads a double: to the microsecond, never early.
    const auto next_us = std::chrono::duration_cast<std::chrono::microseconds>(m.next_due->time_since_epoch()).count();
    CHECK(std::abs(next_us - held["held-3"]) <= 1);
    REQUIRE(m.oldest_unacked_age);  // the held jobs are unacknowledged
    CHECK(m.oldest_unacked_age->count() >= 0);
    CHECK(m.oldest_unacked_age->count() < 20);

    // The held jobs, two to a page, in due order.
    std::error_code ec;
    auto p1 = worker.held_jobs(2, "", ec);
    REQUIRE_FALSE(ec);
    CHECK(p1.held == 4);
    REQUIRE(p1.jobs.size() == 2);
    CHECK(p1.jobs[0].id == "held-3");
    CHECK(p1.jobs[1].id == "held-1");
    REQUIRE(p1.next);
    auto p2 = worker.held_jobs(2, *p1.next, ec);
    REQUIRE_FALSE(ec);
    REQUIRE(p2.jobs.size() == 2);
    CHECK(p2.jobs[0].id == "held-2");
    CHECK(p2.jobs[1].id == "held-0");
    CHECK_FALSE(p2.next);
    worker.held_jobs(2, "garbage", ec);
    CHECK(ec == std::errc::invalid_argument);
    CHECK(worker.wait_queues().front().rfind(o.queue + ".wait.", 0) == 0);

    // Stopped: not ready, says so, still answers a ping; nothing unacknowledged.
    worker.stop();
    const auto h = worker.health();
    CHECK_FALSE(h.ready());
    CHECK(h.reason == "stopped");
    CHECK_FALSE(worker.metrics().connected);
    CHECK_FALSE(worker.metrics().oldest_unacked_age);
    auto late_ping = worker.async_ping(boost::asio::use_future);
    REQUIRE(late_ping.wait_for(5s) == std::future_status::ready);
    CHECK(worker.metrics().requeued_by_reason[1] == 4);  // shutdown: the held jobs went back
    rc.reset();
    cleanup(admin, o);
}
