// The consumer's pure parts: option validation and derived defaults, the
// parking ladder, and the copies republished in place of a delivery.
#include "message_copies.hpp"
#include "packed_message.hpp"

#include "tarry/consumer/subscription_options.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/parking/wait_ladder.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
namespace amqp = tarry::amqp;

namespace {
tarry::subscription_options valid() {
    tarry::subscription_options o;
    o.queue = "jobs";
    return o;
}
bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}
}  // namespace

TEST_CASE("subscription options: the defaults are valid and derived values follow them") {
    auto o = valid();
    CHECK_FALSE(tarry::validate(o));
    CHECK(o.dead_letter_queue_name() == "jobs.dead");
    o.dead_letter_queue = "graveyard";
    CHECK(o.dead_letter_queue_name() == "graveyard");
    // Up to 200 lanes, each consuming until it holds 50; the window is twice
    // that plus workers + 64, and at least 1 000.
    CHECK(o.effective_channels() == 200);
    CHECK(o.lane_hold() == 50);
    CHECK(o.effective_prefetch() == 1000);
    o.max_held = 10;
    CHECK(o.effective_channels() == 1);
    CHECK(o.lane_hold() == 10);
    CHECK(o.effective_prefetch() == 1000);
    o.max_held = 1001;
    CHECK(o.effective_channels() == 21);
    CHECK(o.lane_hold() == 48);  // ceil(1001 / 21)
    CHECK(o.lane_hold() * o.effective_channels() >= o.max_held);
    o.channels = 1;
    o.max_held = 40000;
    // One lane would need a window of 80 068, beyond basic.qos's 16 bits:
    // never unlimited, a second lane is opened instead.
    CHECK(o.effective_channels() == 2);
    CHECK(o.lane_hold() == 20000);
    CHECK(o.effective_prefetch() == 40068);
    o.channels = 0;
    o.max_held = 70000;
    CHECK(o.effective_channels() == 200);
    CHECK(o.effective_prefetch() == 1000);
    o.max_held = 150000;
    CHECK(o.lane_hold() == 750);
    CHECK(o.effective_prefetch() == 2 * 750 + 4 + 64);
    o.prefetch = 50;
    CHECK(o.effective_prefetch() == 50);
    o.channels = 3;
    CHECK(o.effective_channels() == 3);
}

TEST_CASE("subscription options: with coroutines, max_in_flight is the workers' capacity in the derived bounds") {
    auto o = valid();
    CHECK(o.capacity() == o.workers);
    CHECK(o.effective_max_due_waiting() == 512);
    o.handlers = tarry::handler_kind::coroutines;
    CHECK(o.capacity() == 1000);
    CHECK(o.effective_max_due_waiting() == 64 * 1000);
    CHECK(o.effective_prefetch() == 2 * 50 + 1000 + 64);
    o.max_in_flight = 10;
    CHECK(o.effective_max_due_waiting() == 640);
    CHECK(o.effective_prefetch() == 1000);
    // Worker threads do not matter then; at least one coroutine must.
    o.workers = 0;
    CHECK_FALSE(tarry::validate(o));
    o.max_in_flight = 0;
    const auto problem = tarry::validate(o);
    REQUIRE(problem);
    CHECK(problem->option == "max_in_flight");
    o.handlers = tarry::handler_kind::threads;
    o.max_in_flight = 1000;
    REQUIRE(tarry::validate(o));
    CHECK(tarry::validate(o)->option == "workers");
}

TEST_CASE("subscription options: each impossible setting is refused, naming the option and why") {
    struct bad_case {
        const char* option;  // the member at fault
        const char* names;   // what the message must mention too
        void (*spoil)(tarry::subscription_options&);
    };
    const bad_case cases[] = {
        {"queue", "queue", [](tarry::subscription_options& o) { o.queue.clear(); }},
        {"workers", "workers", [](tarry::subscription_options& o) { o.workers = 0; }},
        {"default_delay", "default_delay", [](tarry::subscription_options& o) { o.default_delay = -1ms; }},
        {"max_delay", "max_delay", [](tarry::subscription_options& o) { o.max_delay = -5ms; }},
        {"default_delay", "max_delay", [](tarry::subscription_options& o) { o.default_delay = 10s; o.max_delay = 5s; }},
        {"hold_horizon", "consumer_timeout", [](tarry::subscription_options& o) { o.hold_horizon = 30min; }},
        {"hold_horizon", "consumer_timeout", [](tarry::subscription_options& o) { o.broker_consumer_timeout = 5s; }},
        {"broker_consumer_timeout", "positive", [](tarry::subscription_options& o) { o.broker_consumer_timeout = 0ms; }},
        {"min_park_ttl", "min_park_ttl", [](tarry::subscription_options& o) { o.min_park_ttl = -1ms; }},
        {"park_margin", "park_margin", [](tarry::subscription_options& o) { o.park_margin = -1ms; }},
        {"hold_horizon", "park_margin", [](tarry::subscription_options& o) { o.hold_horizon = 400ms; }},
        {"hold_horizon", "park_margin", [](tarry::subscription_options& o) { o.min_park_ttl = 2s; o.hold_horizon = 2s; }},
        {"max_held", "max_held", [](tarry::subscription_options& o) { o.max_held = 0; }},
        {"max_held", "consuming channels", [](tarry::subscription_options& o) { o.max_held = 100000000; }},
        {"max_held_bytes", "max_held_bytes", [](tarry::subscription_options& o) { o.max_held_bytes = 0; }},
        {"channels", "channels", [](tarry::subscription_options& o) { o.channels = 1001; }},
        {"republish_backoff", "republish_backoff", [](tarry::subscription_options& o) { o.republish_backoff.base = 0ms; }},
        {"copy_confirm_timeout", "copy_confirm_timeout", [](tarry::subscription_options& o) { o.copy_confirm_timeout = 0ms; }},
        {"events_exchange", "publish_events", [](tarry::subscription_options& o) { o.publish_events = true; o.events_exchange.clear(); }},
        {"events_exchange", "255", [](tarry::subscription_options& o) { o.publish_events = true; o.events_exchange.assign(256, 'x'); }},
        {"events_exchange", "amq.", [](tarry::subscription_options& o) { o.publish_events = true; o.events_exchange = "amq.topic"; }},
        {"max_events_waiting", "dropped", [](tarry::subscription_options& o) { o.publish_events = true; o.max_events_waiting = 0; }},
        {"events_per_message", "from 1 to 1000 (got 0)", [](tarry::subscription_options& o) { o.publish_events = true; o.events_per_message = 0; }},
        {"events_per_message", "(got 1001)", [](tarry::subscription_options& o) { o.publish_events = true; o.events_per_message = 1001; }},
    };
    for (const auto& c : cases) {
        auto o = valid();
        c.spoil(o);
        const auto why = tarry::validate(o);
        REQUIRE_MESSAGE(why, c.names);
        CHECK_MESSAGE(why->option == c.option, why->message);
        CHECK_MESSAGE(contains(why->message, c.names), why->message);
    }
}

TEST_CASE("lifecycle events are off by default, and their options are checked only when on") {
    auto o = valid();
    CHECK_FALSE(o.publish_events);
    CHECK(o.events_exchange == "tarry.events");
    CHECK(o.max_events_waiting == 10000);
    CHECK(o.events_per_message == 1);
    o.events_exchange.clear();
    o.max_events_waiting = 0;
    CHECK_FALSE(tarry::validate(o));
    o.publish_events = true;
    o.events_exchange = "my.events";
    o.max_events_waiting = 1;
    CHECK_FALSE(tarry::validate(o));
}

TEST_CASE("the shortest wait queue follows a short hold horizon unless set") {
    auto o = valid();
    CHECK(o.effective_min_park_ttl() == 1s);
    o.hold_horizon = 1s;
    CHECK(o.effective_min_park_ttl() == 500ms);
    CHECK_FALSE(tarry::validate(o));  // 500 ms + 250 ms margin fit in 1 s
    o.min_park_ttl = 300ms;
    CHECK(o.effective_min_park_ttl() == 300ms);
}

TEST_CASE("a hold horizon leaving the backlog margin before consumer_timeout is accepted, beyond it refused") {
    auto o = valid();
    o.broker_consumer_timeout = 5s;  // margin: max(10 %, 2 s) = 2 s
    o.hold_horizon = 3s;
    CHECK_FALSE(tarry::validate(o));
    o.hold_horizon = 3001ms;
    const auto why = tarry::validate(o);
    REQUIRE(why);
    CHECK(why->option == "hold_horizon");
    CHECK(contains(why->message, "hold_horizon (3001 ms) must leave 2000 ms before the broker's consumer_timeout (5000 ms)"));
    o.broker_consumer_timeout = 30min;  // the default: a 3 min margin
    CHECK(o.backlog_margin() == 3min);
    o.hold_horizon = 27min;
    CHECK_FALSE(tarry::validate(o));
    o.hold_horizon = 28min;
    CHECK(tarry::validate(o));
}

TEST_CASE("wait ladder: TTLs double up to the horizon, each queue dead-letters to the work queue") {
    const tarry::parking::wait_ladder ladder("jobs", 1s, 15min);
    const auto& qs = ladder.queues();
    REQUIRE(qs.size() == 10);  // 1 s … 512 s
    for (std::size_t i = 0; i < qs.size(); ++i) {
        const auto ttl = std::chrono::milliseconds(1000LL << i);
        CHECK(qs[i].ttl == ttl);
        CHECK(qs[i].name == "jobs.wait." + std::to_string(ttl.count()));
        CHECK(*qs[i].arguments.find("x-message-ttl") == amqp::field_value(std::int64_t{ttl.count()}));
        CHECK(*qs[i].arguments.find("x-dead-letter-exchange") == amqp::field_value(std::string()));
        CHECK(*qs[i].arguments.find("x-dead-letter-routing-key") == amqp::field_value(std::string("jobs")));
    }
}

TEST_CASE("wait ladder: choose takes the largest TTL that returns the job in time") {
    const tarry::parking::wait_ladder ladder("q", 1s, 8s);
    REQUIRE(ladder.queues().size() == 4);  // 1, 2, 4, 8 s
    CHECK(ladder.choose(999ms) == nullptr);
    CHECK(ladder.choose(1000ms)->ttl == 1s);
    CHECK(ladder.choose(3999ms)->ttl == 2s);
    CHECK(ladder.choose(4s)->ttl == 4s);
    CHECK(ladder.choose(1h)->ttl == 8s);
    const tarry::parking::wait_ladder one("q", 1s, 500ms);
    CHECK(one.queues().size() == 1);  // always one rung
    CHECK_THROWS_AS(tarry::parking::wait_ladder("q", 0ms, 1s), std::invalid_argument);
}

TEST_CASE("a parked copy keeps the message, drops x-death and expiration, and fixes the due time") {
    amqp::message m("body");
    m.properties.message_id = "job-1";
    m.properties.expiration = "60000";
    m.properties.timestamp = 1700000000;
    m.properties.headers = amqp::field_table{
        {"x-delay", std::int32_t{5000}},
        {"x-death", amqp::field_array{amqp::field_table{{"count", std::int64_t{1}}}}},
        {"x-first-death-queue", "jobs.wait.1000"},
        {"x-last-death-reason", "expired"},
        {"x-delivery-count", std::int64_t{4}},
        {"x-acquired-count", std::int64_t{9}},
        {"app", "kept"},
    };
    const auto due = tarry::wall_time(std::chrono::seconds(1700000005));
    const auto copy = tarry::detail::parked_copy(m, due, due - 1s);
    CHECK(copy.body == m.body);
    CHECK(copy.properties.message_id == m.properties.message_id);
    CHECK(copy.properties.timestamp == m.properties.timestamp);
    CHECK_FALSE(copy.properties.expiration);
    const auto& h = *copy.properties.headers;
    CHECK(h.find("x-death") == nullptr);
    CHECK(h.find("x-first-death-queue") == nullptr);
    CHECK(h.find("x-last-death-reason") == nullptr);
    CHECK(h.find("x-delay") == nullptr);
    CHECK(h.find("x-delivery-count") == nullptr);  // a quorum queue's count of the original's returns
    CHECK(h.find("x-acquired-count") == nullptr);  // RabbitMQ 4.3's count of its acquisitions
    CHECK(*h.find("app") == amqp::field_value("kept"));
    // Read back, it is due exactly when the original was, wherever it arrives.
    const auto read = tarry::contract::read_schedule(copy.properties, due + 1h, {});
    REQUIRE(std::holds_alternative<tarry::contract::schedule>(read));
    CHECK(std::get<tarry::contract::schedule>(read).due == due);
}

TEST_CASE("a dead letter carries its reason (bounded) and attempt") {
    amqp::message m("x");
    m.properties.expiration = "10";
    m.properties.headers = amqp::field_table{{"x-death", amqp::field_array{}}};
    const auto copy = tarry::detail::dead_letter_copy(m, "invalid-schedule: perform_job_at is NaN", 3);
    const auto& h = *copy.properties.headers;
    CHECK(*h.find("x-tarry-reason") == amqp::field_value("invalid-schedule: perform_job_at is NaN"));
    CHECK(*h.find("x-tarry-attempt") == amqp::field_value(std::int64_t{3}));
    CHECK(h.find("x-death") == nullptr);
    CHECK_FALSE(copy.properties.expiration);
    const auto long_copy = tarry::detail::dead_letter_copy(m, std::string(5000, 'e'), 1);
    const auto* reason = long_copy.properties.headers->find("x-tarry-reason")->get_if<std::string>();
    REQUIRE(reason);
    CHECK(reason->size() == tarry::detail::max_reason_length);
    CHECK(reason->substr(reason->size() - 3) == "...");
}

TEST_CASE("a packed message unpacks to the message it was, in one allocation of its wire size") {
    amqp::message m("a body of some length");
    m.properties.message_id = "id-1";
    m.properties.timestamp = 1700000000;
    m.properties.delivery_mode = 2;
    m.properties.headers = amqp::field_table{{"perform_job_at", 1700000005.25}, {"n", std::int32_t{-3}}};
    const auto p = tarry::detail::packed_message::pack(m);
    CHECK(p.unpack() == m);
    CHECK(p.properties() == m.properties);
    CHECK(p.body() == "a body of some length");
    CHECK(p.size() < m.body.size() + 80);  // flags, id, timestamp, mode and a two-entry table
    const auto empty = tarry::detail::packed_message::pack(amqp::message{});
    CHECK(empty.unpack() == amqp::message{});
    CHECK(tarry::detail::packed_message{}.unpack() == amqp::message{});
    CHECK(tarry::detail::packed_message{}.size() == 0);
    CHECK(tarry::detail::packed_message{}.body().empty());
    // The sizes live in the allocation: a held job carries one pointer.
    static_assert(sizeof(tarry::detail::packed_message) == sizeof(void*));
    amqp::message body_only(std::string(1000, 'b'));
    const auto q = tarry::detail::packed_message::pack(body_only);
    CHECK(q.size() == 1000 + 2);  // two bytes of property flags, nothing set
    CHECK(q.unpack() == body_only);
    CHECK(q.kept() == nullptr);
}

TEST_CASE("a kept message is the decoded message itself, moved; moves hand it over") {
    amqp::message m("kept body");
    m.properties.message_id = "id-2";
    m.properties.headers = amqp::field_table{{"perform_job_at", 1700000005.25}};
    const amqp::message original = m;
    auto k = tarry::detail::packed_message::keep(std::move(m));
    REQUIRE(k.kept() != nullptr);
    CHECK(*k.kept() == original);
    CHECK(k.unpack() == original);
    CHECK(k.properties() == original.properties);
    CHECK(k.body() == "kept body");
    CHECK(k.size() == original.body.size());
    const auto* where = k.kept();
    tarry::detail::packed_message moved(std::move(k));
    CHECK(moved.kept() == where);  // the same object, not a copy
    CHECK(k.kept() == nullptr);    // NOLINT: the moved-from handle is empty
    CHECK(k.unpack() == amqp::message{});
    // Assigning over a packed message frees it and takes the kept one.
    auto p = tarry::detail::packed_message::pack(original);
    p = std::move(moved);
    CHECK(p.kept() == where);
    CHECK(p.unpack() == original);
    // And a packed one can replace a kept one (what push_held does).
    p = tarry::detail::packed_message::pack(*p.kept());
    CHECK(p.kept() == nullptr);
    CHECK(p.unpack() == original);
}
