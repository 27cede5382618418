// The consumer's options: validation, each refusal naming the option and
// why, and the values derived from them.
#include "tarry/consumer/subscription_options.hpp"
#include "../text_contains.hpp"

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
using unit_test_text::contains;
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
        {"control_catch_up_timeout", "control_catch_up_timeout", [](tarry::subscription_options& o) { o.control_catch_up_timeout = 0ms; }},
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
