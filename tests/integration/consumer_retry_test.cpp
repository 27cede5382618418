// Retries against the real broker: backoff delays between attempts,
// attempts exhausted → dead-letter queue with reason and last error, a
// custom backoff that throws (dead-lettered, consuming goes on), permanent
// failures, requeue, a refused retry copy (nothing lost), a copy
// held back by a resource alarm, and replay of dead letters.
#include "consumer_fixture.hpp"
#include "private_broker.hpp"

#include "tarry/consumer/replay.hpp"

#include <atomic>
#include <future>

using namespace consumer_it;

namespace {

// Fails attempts 1..k of every job, where k is the job's x-fail header.
tarry::job_outcome fail_first(const tarry::job& j) {
    const auto* k = j.headers().find("x-fail");
    const auto* n = k ? k->get_if<std::int32_t>() : nullptr;
    if (n && static_cast<std::int32_t>(j.attempt) <= *n)
        throw std::runtime_error("boom on attempt " + std::to_string(j.attempt));
    return tarry::job_outcome::success();
}

const amqp::field_value* header(const amqp::message& m, const char* name) {
    return m.properties.headers ? m.properties.headers->find(name) : nullptr;
}

double ms_between(sys::time_point a, sys::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

TEST_CASE("a job failing twice runs three times, after the policy's growing delays, never early") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("retry"));
    o.retry = tarry::retry::backoff_policy::exponential(400ms, 2.0, 10s);
    running_consumer rc(url, o, fail_first);
    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "flaky", {{"x-fail", std::int32_t{2}}});
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 15s));
    const auto runs = rc.log.of(kind::run);
    REQUIRE(runs.size() == 3);
    const auto retries = rc.log.of(kind::retry);
    REQUIRE(retries.size() == 2);
    for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(runs[i].attempt == i + 1);
        CHECK(runs[i].at >= runs[i].due);
        CHECK(lateness_ms(runs[i]) < 250);
    }
    // Attempt n+1 is due the policy's delay after attempt n failed: 400 ms, then 800 ms.
    CHECK(*retries[0].next_due == runs[1].due);
    CHECK(*retries[1].next_due == runs[2].due);
    CHECK(ms_between(runs[0].at, runs[1].due) >= 400);
    CHECK(ms_between(runs[0].at, runs[1].due) < 400 + 250);
    CHECK(ms_between(runs[1].at, runs[2].due) >= 800);
    CHECK(ms_between(runs[1].at, runs[2].due) < 800 + 250);
    rc.worker.stop();
    const auto s = rc.worker.stats();
    CHECK(s.handler_failures == 2);
    CHECK(s.retried == 2);
    CHECK(s.succeeded == 1);
    CHECK(s.dead_lettered == 0);
    cleanup(c, o);
}

TEST_CASE("attempts exhausted: the dead-letter queue holds the job with reason, last error and counts") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("exhausted"));
    o.retry = tarry::retry::backoff_policy::fixed(200ms).with_max_attempts(3);
    running_consumer rc(url, o, fail_first);
    auto ch = confirm_channel(c);
    const auto before = sys::now();
    publish_raw(ch, o.queue, "doomed", {{"x-fail", std::int32_t{100}}, {"app", "kept"}});
    REQUIRE(rc.log.wait_count(kind::dead, 1, 15s));
    CHECK(rc.log.count(kind::run) == 3);
    const auto dead = rc.log.of(kind::dead).front();
    CHECK(dead.reason.rfind("attempts-exhausted: boom on attempt 3", 0) == 0);
    rc.worker.stop();
    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == 1);
    const auto& m = letters.front();
    CHECK(m.body_view() == "job doomed");
    CHECK(reason_of(m).rfind("attempts-exhausted: boom on attempt 3", 0) == 0);
    CHECK(*header(m, "x-tarry-last-error") == amqp::field_value("boom on attempt 3"));
    CHECK(*header(m, "x-tarry-attempt") == amqp::field_value(std::int64_t{3}));
    CHECK(*header(m, "app") == amqp::field_value("kept"));
    const auto* first = header(m, "x-tarry-first-attempt-at");
    REQUIRE(first);
    REQUIRE(first->get_if<double>());
    CHECK(*first->get_if<double>() >= epoch(before));
    CHECK(header(m, "x-death") == nullptr);
    cleanup(c, o);
}

TEST_CASE("a custom backoff that throws: the job is dead-lettered backoff-failed, the next one still runs") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("backoff-throws"));
    // Called on the consumer's I/O thread after a failed attempt.
    o.retry = tarry::retry::backoff_policy::custom([](unsigned n, tarry::retry::random_source&) {
        if (n == 1) throw std::runtime_error("no delay for attempt 1");
        return tarry::retry::duration(100ms);
    });
    running_consumer rc(url, o, fail_first);
    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "unlucky", {{"x-fail", std::int32_t{1}}, {"app", "kept"}});
    REQUIRE(rc.log.wait_count(kind::dead, 1, 10s));
    CHECK(rc.log.find(kind::dead, "unlucky")->reason == "backoff-failed: no delay for attempt 1");
    // The consumer goes on: the next job runs.
    publish_raw(ch, o.queue, "next", {});
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 10s));
    CHECK(rc.log.find(kind::succeeded, "next"));
    CHECK(rc.log.count(kind::retry) == 0);
    rc.worker.stop();
    const auto s = rc.worker.stats();
    CHECK(s.handler_failures == 1);
    CHECK(s.dead_lettered == 1);
    CHECK(s.retried == 0);
    CHECK(s.succeeded == 1);
    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == 1);
    const auto& m = letters.front();
    CHECK(m.body_view() == "job unlucky");
    CHECK(reason_of(m) == "backoff-failed: no delay for attempt 1");
    CHECK(*header(m, "x-tarry-last-error") == amqp::field_value("boom on attempt 1"));
    CHECK(*header(m, "x-tarry-attempt") == amqp::field_value(std::int64_t{1}));
    CHECK(*header(m, "app") == amqp::field_value("kept"));
    cleanup(c, o);
}

TEST_CASE("permanent failures and rejects are dead-lettered at once; requeue runs the job again") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("outcomes"));
    o.retry = tarry::retry::backoff_policy::fixed(100ms);
    o.is_permanent = [](const std::exception_ptr& e) {
        try {
            std::rethrow_exception(e);
        } catch (const std::invalid_argument&) {
            return true;
        } catch (...) {
            return false;
        }
    };
    std::atomic<int> requeues{0};
    running_consumer rc(url, o, [&](const tarry::job& j) {
        const auto id = std::string(j.id());
        if (id == "permanent") throw tarry::permanent_error("bad input");
        if (id == "configured") throw std::invalid_argument("business rule");
        if (id == "rejected") return tarry::job_outcome::reject("not for us");
        if (id == "requeue" && requeues++ == 0) return tarry::job_outcome::requeue();
        return tarry::job_outcome::success();
    });
    auto ch = confirm_channel(c);
    for (const char* id : {"permanent", "configured", "rejected", "requeue"}) publish_raw(ch, o.queue, id, {});
    REQUIRE(rc.log.wait_count(kind::dead, 3, 15s));
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 15s));
    CHECK(rc.log.find(kind::dead, "permanent")->reason == "rejected: bad input");
    CHECK(rc.log.find(kind::dead, "configured")->reason == "rejected: business rule");
    CHECK(rc.log.find(kind::dead, "rejected")->reason == "rejected: not for us");
    CHECK(rc.log.count(kind::retry) == 0);
    CHECK(rc.log.find(kind::requeued, "requeue"));
    const auto runs = rc.log.of(kind::run);
    CHECK(std::count_if(runs.begin(), runs.end(), [](const job_event& e) { return e.id == "requeue"; }) == 2);
    rc.worker.stop();
    CHECK(rc.worker.stats().requeued == 1);
    CHECK(dead_letters(c, o).size() == 3);
    cleanup(c, o);
}

TEST_CASE("the broker refuses the retry copy: the original is not acknowledged and not lost") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("refused"));
    o.declare_queue = false;  // ours, full at one ready message, refusing publishes beyond
    o.channels = 1;
    o.prefetch = 1;
    o.retry = tarry::retry::backoff_policy::fixed(100ms);
    o.republish_backoff = tarry::retry::backoff_policy::exponential(200ms, 3.0, 10s);
    auto setup = c.open_channel();
    auto q = queue_opts(o.queue, false, false, {{"x-max-length", std::int32_t{1}}, {"x-overflow", "reject-publish"}});
    q.durable = true;
    value_of(setup.async_declare_queue(q, use_future));
    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "victim", {{"x-fail", std::int32_t{100}}});
    // The handler fails only once the queue is full: its retry copy must
    // not win the race with the blocker (RabbitMQ 4.0 took it once).
    std::promise<void> full;
    auto queue_full = full.get_future().share();
    {
        running_consumer rc(url, o, [queue_full](const tarry::job& j) {
            queue_full.wait_for(20s);
            return fail_first(j);
        });
        REQUIRE(rc.log.wait_count(kind::run, 1, 10s));
        // The consumer holds the victim (prefetch 1); this one waits, filling the queue.
        publish_raw(ch, o.queue, "blocker", {{"perform_job_at", epoch(sys::now() + 1h)}});
        full.set_value();
        REQUIRE(rc.log.wait_count(kind::failed, 3, 20s));
        const auto failed = rc.log.of(kind::failed);
        for (const auto& f : failed) {
            CHECK(f.id == "victim");
            CHECK(f.reason.find("copy to '" + o.queue + "' refused") != std::string::npos);
        }
        // Published again after 200 ms, then 600 ms (republish_backoff), and
        // refused again; the handler is not run again for it (its attempt
        // count would not move: its retry limit would never be reached).
        CHECK(failed[0].reason.find("published again in 200 ms") != std::string::npos);
        CHECK(failed[1].reason.find("published again in 600 ms") != std::string::npos);
        CHECK(failed[1].at - failed[0].at >= 200ms);
        CHECK(failed[2].at - failed[1].at >= 600ms);
        CHECK(rc.log.count(kind::run) == 1);
        CHECK(rc.log.count(kind::retry) == 0);
        rc.worker.stop();
        CHECK(rc.worker.stats().copy_failures >= 3);
    }
    // Both are still in the queue; the victim was never acknowledged, nor copied.
    auto after = c.open_channel();
    CHECK(value_of(after.async_declare_queue(passive_queue(o.queue), use_future)).message_count == 2);
    auto first = value_of(after.async_get(o.queue, {.no_ack = true}, use_future));
    REQUIRE(first);
    CHECK(first->item.msg.properties.message_id == std::optional<std::string>("victim"));
    CHECK(header(first->item.msg, "x-tarry-attempt") == nullptr);
    cleanup(c, o);
}

TEST_CASE("a memory alarm holds back a retry copy, not the acks of the other jobs") {
    TARRY_REQUIRE_BROKER(shared_url);  // skipped, like the rest, outside a broker run
    // A private broker: its alarm blocks every connection that publishes.
    tarry_test::private_broker broker;
    const auto& url = broker.url();
    connected_client c(url);
    auto o = options_for(unique_name("alarm"));
    o.retry = tarry::retry::backoff_policy::fixed(100ms);
    running_consumer rc(url, o, fail_first);
    const auto t0 = sys::now();
    {
        auto ch = confirm_channel(c);
        publish_raw(ch, o.queue, "failing", {{"x-fail", std::int32_t{1}}, {"perform_job_at", epoch(t0 + 5s)}});
        for (int i = 0; i < 10; ++i)
            publish_raw(ch, o.queue, "fine" + std::to_string(i), {{"perform_job_at", epoch(t0 + 6s)}});
    }
    REQUIRE(wait_held(rc, 11));
    const auto alarm = broker.ctl({"set_vm_memory_high_watermark", "0.000001"});
    REQUIRE_MESSAGE(alarm.exit_code == 0, alarm.err);
    REQUIRE_MESSAGE(sys::now() < t0 + 4500ms, "rabbitmqctl took too long: the jobs fell due before the alarm");
    // "failing" fails at 5 s; its retry copy is published and not confirmed
    // (its connection is now blocked). The ten fine jobs run at 6 s and
    // their acks reach the broker all the same.
    REQUIRE(rc.log.wait_count(kind::succeeded, 10, 15s));
    std::size_t unacked = 0;
    for (int i = 0; i < 50; ++i) {  // acks travel asynchronously
        unacked = unacked_in(broker, o.queue);
        if (unacked == 1) break;
        std::this_thread::sleep_for(100ms);
    }
    CHECK(unacked == 1);  // only "failing", waiting for its copy's confirm
    CHECK(rc.log.count(kind::retry) == 0);

    const auto clear = broker.ctl({"set_vm_memory_high_watermark", "0.4"});
    REQUIRE_MESSAGE(clear.exit_code == 0, clear.err);
    REQUIRE(rc.log.wait_count(kind::succeeded, 11, 30s));
    CHECK(rc.log.find(kind::retry, "failing"));
    rc.worker.stop();
    CHECK(unacked_in(broker, o.queue) == 0);
    auto after = c.open_channel();
    CHECK(value_of(after.async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
}

TEST_CASE("replay moves dead letters back (all, or by reason) and they run from attempt 1") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("replay"));
    o.retry.reset();  // first failure is final
    std::atomic<bool> fixed{false};
    running_consumer rc(url, o, [&](const tarry::job& j) {
        if (fixed) return tarry::job_outcome::success();
        if (j.id().rfind("reject", 0) == 0) return tarry::job_outcome::reject("policy");
        throw std::runtime_error("bug");
    });
    auto ch = confirm_channel(c);
    for (int i = 0; i < 3; ++i) publish_raw(ch, o.queue, "fail" + std::to_string(i), {});
    for (int i = 0; i < 2; ++i) publish_raw(ch, o.queue, "reject" + std::to_string(i), {});
    REQUIRE(rc.log.wait_count(kind::dead, 5, 15s));
    fixed = true;
    const auto only_failed = tarry::replay_dead_letters(c.conn, {o.queue, "", "attempts-exhausted", 100});
    CHECK(only_failed.moved == 3);
    CHECK(only_failed.skipped == 2);
    REQUIRE(rc.log.wait_count(kind::succeeded, 3, 15s));
    for (const auto& s : rc.log.of(kind::succeeded)) {
        CHECK(s.id.rfind("fail", 0) == 0);
        CHECK(s.attempt == 1);
    }
    const auto rest = tarry::replay_dead_letters(c.conn, {o.queue, "", "", 100});
    CHECK(rest.moved == 2);
    CHECK(rest.skipped == 0);
    REQUIRE(rc.log.wait_count(kind::succeeded, 5, 15s));
    rc.worker.stop();
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.dead_letter_queue_name()), use_future))
              .message_count == 0);
    cleanup(c, o);
}
