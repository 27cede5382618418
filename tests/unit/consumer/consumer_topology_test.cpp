// The queues a consumer declares: their kind, their arguments, and which
// are only checked (passive) because someone else declares them.
#include "consumer_topology.hpp"

#include "tarry/consumer/worker_topology.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace std::chrono_literals;

namespace {

tarry::subscription_options jobs() {
    tarry::subscription_options o;
    o.queue = "jobs";
    o.hold_horizon = 4s;
    o.min_park_ttl = 1s;
    return o;
}

std::string text(const tarry::amqp::queue_options& q, std::string_view name) {
    const auto* v = q.arguments.find(name);
    if (v == nullptr) return "(absent)";
    const auto* s = std::get_if<std::string>(&v->value);
    return s ? *s : "(not a string)";
}

}  // namespace

TEST_CASE("classic: the work queue, the dead-letter queue and the wait queues, durable, declared") {
    const auto qs = tarry::detail::consumer_topology(jobs());
    REQUIRE(qs.size() == 5);  // jobs, jobs.dead, wait 1 s, 2 s, 4 s
    CHECK(qs[0].name == "jobs");
    CHECK(qs[1].name == "jobs.dead");
    CHECK(qs[2].name == "jobs.wait.1000");
    CHECK(qs[4].name == "jobs.wait.4000");
    for (const auto& q : qs) {
        CAPTURE(q.name);
        CHECK(q.durable);
        CHECK_FALSE(q.passive);
        CHECK(text(q, "x-queue-type") == "(absent)");
        CHECK(text(q, "x-dead-letter-strategy") == "(absent)");
    }
    CHECK(text(qs[2], "x-dead-letter-routing-key") == "jobs");
}

TEST_CASE("quorum: every queue is a quorum queue; wait queues dead-letter at least once") {
    auto o = jobs();
    o.queue_type = tarry::queue_kind::quorum;
    const auto qs = tarry::detail::consumer_topology(o);
    REQUIRE(qs.size() == 5);
    for (const auto& q : qs) {
        CAPTURE(q.name);
        CHECK(q.durable);
        CHECK(text(q, "x-queue-type") == "quorum");
    }
    for (std::size_t i = 2; i < qs.size(); ++i) {
        CAPTURE(qs[i].name);
        CHECK(text(qs[i], "x-dead-letter-strategy") == "at-least-once");
        CHECK(text(qs[i], "x-overflow") == "reject-publish");  // what at-least-once needs
        CHECK(qs[i].arguments.find("x-message-ttl") != nullptr);
        CHECK(text(qs[i], "x-dead-letter-routing-key") == "jobs");
    }
    CHECK(text(qs[0], "x-dead-letter-strategy") == "(absent)");
    CHECK(text(qs[1], "x-overflow") == "(absent)");
}

TEST_CASE("declared elsewhere: the work queue alone, or every queue, is only checked (passive)") {
    auto o = jobs();
    o.declare_queue = false;
    auto qs = tarry::detail::consumer_topology(o);
    CHECK(qs[0].passive);
    for (std::size_t i = 1; i < qs.size(); ++i) CHECK_FALSE(qs[i].passive);
    o.declare_own_queues = false;
    qs = tarry::detail::consumer_topology(o);
    for (const auto& q : qs) CHECK(q.passive);
}

TEST_CASE("dead letters to an exchange: no dead-letter queue is declared") {
    auto o = jobs();
    o.dead_letter_exchange = "dlx";
    const auto qs = tarry::detail::consumer_topology(o);
    REQUIRE(qs.size() == 4);
    CHECK(qs[1].name == "jobs.wait.1000");
}

TEST_CASE("parking through a delay cascade: no wait queues; the cascade and the work queue's delivery queue, or "
          "only the entry exchange and that queue checked when someone else declares them") {
    auto o = jobs();
    tarry::parking::cascade_spec s;
    s.levels = 4;
    s.prefix = "delays";
    o.parking_strategy = s;
    const auto queues = tarry::detail::consumer_topology(o);
    REQUIRE(queues.size() == 2);  // the work queue and the dead-letter queue
    CHECK(queues[0].name == "jobs");
    CHECK(queues[1].name == "jobs.dead");

    const tarry::parking::delay_cascade cascade(s);
    const auto delivery = cascade.delivery({"", "jobs"}).queues.front();
    const auto declared = tarry::detail::cascade_parking(o);
    REQUIRE(declared);
    CHECK(declared->exchanges.size() == cascade.topology().exchanges.size());
    CHECK(declared->queues.size() == cascade.topology().queues.size() + 1);
    CHECK(declared->queues.back().name == delivery.name);
    CHECK(text(declared->queues.back(), "x-dead-letter-routing-key") == "jobs");
    for (const auto& x : declared->exchanges) CHECK_FALSE(x.passive);

    o.declare_own_queues = false;
    const auto checked = tarry::detail::cascade_parking(o);
    REQUIRE(checked);
    REQUIRE(checked->exchanges.size() == 1);
    CHECK(checked->exchanges[0].name == cascade.entry_exchange());
    CHECK(checked->exchanges[0].passive);
    REQUIRE(checked->queues.size() == 1);
    CHECK(checked->queues[0].name == delivery.name);
    CHECK(checked->queues[0].passive);
    CHECK(checked->bindings.empty());

    o.parking_strategy.reset();
    CHECK_FALSE(tarry::detail::cascade_parking(o));
}

TEST_CASE("basic.consume: the work queue; x-consumer-timeout only when asked, as the broker's timeout in ms") {
    using tarry::detail::lane_consume_options;
    tarry::subscription_options o;
    o.queue = "jobs";
    auto plain = lane_consume_options(o);
    CHECK(plain.queue == "jobs");
    CHECK(plain.arguments.find("x-consumer-timeout") == nullptr);
    CHECK_FALSE(plain.no_ack);
    CHECK_FALSE(plain.exclusive);
    o.consumer_timeout_argument = true;
    o.broker_consumer_timeout = std::chrono::minutes(20);
    auto timed = lane_consume_options(o);
    const auto* v = timed.arguments.find("x-consumer-timeout");
    REQUIRE(v != nullptr);
    REQUIRE(std::get_if<std::int64_t>(&v->value) != nullptr);
    CHECK(*std::get_if<std::int64_t>(&v->value) == 1200000);
}


// tarry::worker_topology: the same parts, as one topology to write out or
// declare elsewhere (tarry topology export --worker).

TEST_CASE("worker_topology: what the consumer declares, every part declared even when the consumer only checks") {
    auto o = jobs();
    o.queue_type = tarry::queue_kind::quorum;
    const auto declared = tarry::detail::consumer_topology(o);
    o.declare_queue = false;
    o.declare_own_queues = false;
    const auto t = tarry::worker_topology(o);
    CHECK(t.exchanges.empty());
    CHECK(t.bindings.empty());
    REQUIRE(t.queues.size() == declared.size());
    for (std::size_t i = 0; i < declared.size(); ++i) {
        CAPTURE(declared[i].name);
        CHECK(t.queues[i].name == declared[i].name);
        CHECK_FALSE(t.queues[i].passive);
        CHECK(t.queues[i].durable);
        CHECK(t.queues[i].arguments == declared[i].arguments);
    }
}

TEST_CASE("worker_topology: the events exchange with publish_events, as the consumer declares it") {
    auto o = jobs();
    o.publish_events = true;
    o.events_exchange = "job.events";
    const auto t = tarry::worker_topology(o);
    REQUIRE(t.exchanges.size() == 1);
    CHECK(t.exchanges[0].name == "job.events");
    CHECK(t.exchanges[0].type == "topic");
    CHECK(t.exchanges[0].durable);
    CHECK_FALSE(t.exchanges[0].passive);
    const auto same = tarry::detail::events_exchange(o);
    CHECK(same.name == t.exchanges[0].name);
    CHECK(same.type == t.exchanges[0].type);
}

TEST_CASE("worker_topology: parking through a cascade: the work and dead-letter queues first, then the whole "
          "cascade with the work queue's delivery queue; no wait queue") {
    auto o = jobs();
    tarry::parking::cascade_spec s;
    s.levels = 3;
    s.prefix = "delays";
    o.parking_strategy = s;
    o.declare_own_queues = false;  // the consumer would only check two parts; the topology has them all
    const auto t = tarry::worker_topology(o);
    const tarry::parking::delay_cascade cascade(s);
    const auto whole = cascade.topology({"", "jobs"});
    CHECK(t.exchanges.size() == whole.exchanges.size());
    CHECK(t.bindings.size() == whole.bindings.size());
    REQUIRE(t.queues.size() == whole.queues.size() + 2);
    CHECK(t.queues[0].name == "jobs");
    CHECK(t.queues[1].name == "jobs.dead");
    for (std::size_t i = 0; i < whole.queues.size(); ++i) CHECK(t.queues[i + 2].name == whole.queues[i].name);
    for (const auto& q : t.queues) {
        CAPTURE(q.name);
        CHECK(q.name.find(".wait.") == std::string::npos);
        CHECK_FALSE(q.passive);
    }
    for (const auto& x : t.exchanges) CHECK_FALSE(x.passive);
}
