// The delay cascade's values (tarry/parking/delay_cascade.hpp): its checks,
// names, arguments and routes. A small model of RabbitMQ's topic matching
// and dead-lettering walks every route through the declared bindings, so
// a wrong binding or TTL shows here before the broker tests.
#include "tarry/parking/delay_cascade.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace tarry;
using namespace std::chrono_literals;
using parking::cascade_spec;
using parking::cascade_strategy;
using parking::delay_cascade;
using parking::unit_rounding;

namespace {

std::vector<std::string> words(const std::string& key) {
    std::vector<std::string> out;
    std::stringstream in(key);
    for (std::string w; std::getline(in, w, '.');) out.push_back(w);
    return out;
}

// RabbitMQ's topic matching: `*` one word, `#` zero or more.
bool topic_match(const std::vector<std::string>& pattern, std::size_t p, const std::vector<std::string>& key,
                 std::size_t k) {
    if (p == pattern.size()) return k == key.size();
    if (pattern[p] == "#")
        return topic_match(pattern, p + 1, key, k) || (k < key.size() && topic_match(pattern, p, key, k + 1));
    if (k == key.size()) return false;
    return (pattern[p] == "*" || pattern[p] == key[k]) && topic_match(pattern, p + 1, key, k + 1);
}

const amqp::queue_options* find_queue(const parking::cascade_topology& t, const std::string& name) {
    for (const auto& q : t.queues)
        if (q.name == name) return &q;
    return nullptr;
}

std::int64_t int_arg(const amqp::queue_options& q, std::string_view name) {
    const auto* v = q.arguments.find(name);
    REQUIRE(v != nullptr);
    return *amqp::wire::integer_of(*v);
}

std::string string_arg(const amqp::queue_options& q, std::string_view name) {
    const auto* v = q.arguments.find(name);
    REQUIRE(v != nullptr);
    return *v->get_if<std::string>();
}

struct walk_result {
    std::int64_t waited_ms = 0;
    unsigned hops = 0;
    std::string exchange, routing_key;  // where it left the cascade
};

// Follows a message from the entry exchange through the bindings and the
// queues' dead-lettering until it leaves towards its destination. Fails
// the test if an exchange routes it to anything but exactly one place.
walk_result walk(const delay_cascade& c, const parking::cascade_topology& all, const std::string& key) {
    walk_result r;
    std::string exchange = c.entry_exchange();
    const auto key_words = words(key);
    for (int step = 0; step < 200; ++step) {
        std::vector<const parking::cascade_binding*> matched;
        for (const auto& b : all.bindings)
            if (b.source == exchange && topic_match(words(b.routing_key), 0, key_words, 0)) matched.push_back(&b);
        REQUIRE_MESSAGE(matched.size() == 1, "exchange " << exchange << " routes " << key << " to "
                                                         << matched.size() << " places");
        if (matched[0]->to_exchange) {
            exchange = matched[0]->destination;
            continue;
        }
        const auto* q = find_queue(all, matched[0]->destination);
        REQUIRE(q != nullptr);
        r.waited_ms += int_arg(*q, "x-message-ttl");
        if (q->arguments.find("x-dead-letter-routing-key")) {  // a delivery queue: it leaves
            r.exchange = string_arg(*q, "x-dead-letter-exchange");
            r.routing_key = string_arg(*q, "x-dead-letter-routing-key");
            return r;
        }
        ++r.hops;
        exchange = string_arg(*q, "x-dead-letter-exchange");
    }
    FAIL("the message never left the cascade");
    return r;
}

parking::cascade_spec spec_of(cascade_strategy strategy, unsigned base, unsigned levels,
                              std::chrono::milliseconds unit) {
    parking::cascade_spec s;
    s.strategy = strategy;
    s.base = base;
    s.levels = levels;
    s.unit = unit;
    return s;
}

}  // namespace

TEST_CASE("check refuses what cannot be a cascade, naming the field") {
    const auto refused = [](cascade_spec s) { return parking::check(s); };
    cascade_spec s;
    CHECK_FALSE(refused(s).code);
    s.base = 3;
    CHECK(refused(s).message.find("binary strategy has base 2") != std::string::npos);
    s.strategy = cascade_strategy::powers;
    CHECK(refused(s).message.find("longest x-message-ttl") != std::string::npos);  // 2·3^27 s
    s.levels = 10;
    CHECK_FALSE(refused(s).code);
    s.base = 1;
    CHECK(refused(s).message.find("base must be 2 to 36") != std::string::npos);
    s = {};
    s.levels = 0;
    CHECK(refused(s).message.find("levels") != std::string::npos);
    s = {};
    s.unit = 0ms;
    CHECK(refused(s).message.find("unit") != std::string::npos);
    s = {};
    s.prefix.clear();
    CHECK(refused(s).message.find("prefix") != std::string::npos);
    CHECK(refused(s).code == amqp::errc::invalid_argument);
    // 29 levels of 1 s: the top queue would wait 2^28 s (8.5 years) - fine;
    // 30: 2^29 s, past RabbitMQ's ten years.
    s = {};
    s.levels = 29;
    CHECK_FALSE(refused(s).code);
    s.levels = 30;
    CHECK(refused(s).message.find("longest x-message-ttl") != std::string::npos);
    CHECK_THROWS_AS(delay_cascade{s}, std::invalid_argument);
}

TEST_CASE("28 levels of 1000 ms: 1 s is 27 zeros then a 1; the maximum uses the top level; 1000 years is refused") {
    const delay_cascade c({});
    const parking::cascade_destination d{"", "jobs"};
    CHECK(c.max_delay() == std::chrono::milliseconds((std::int64_t{1} << 28) - 1) * 1000);
    const auto one = c.route(d, 1000ms, unit_rounding::up);
    REQUIRE(one);
    const auto w = words(one->routing_key);
    REQUIRE(w.size() == 29);
    CHECK(w[0] == delay_cascade::destination_word(d));
    for (int i = 1; i < 28; ++i) CHECK(w[i] == "0");
    CHECK(w[28] == "1");
    CHECK(one->hops == 1);
    const auto top = c.route(d, c.max_delay(), unit_rounding::up);
    REQUIRE(top);
    CHECK(top->hops == 28);
    CHECK(words(top->routing_key)[1] == "1");
    CHECK_FALSE(c.route(d, c.max_delay() + 1ms, unit_rounding::up));
    CHECK_FALSE(c.route(d, std::chrono::hours(24 * 365 * 1000), unit_rounding::up));
}

TEST_CASE("delays round up to whole units for delivery and down for parking; negative is 0") {
    auto s = spec_of(cascade_strategy::binary, 2, 10, 10ms);
    const delay_cascade c(s);
    const parking::cascade_destination d{"x", "k"};
    CHECK(c.route(d, 1ms, unit_rounding::up)->units == 1);
    CHECK(c.route(d, 10ms, unit_rounding::up)->units == 1);
    CHECK(c.route(d, 11ms, unit_rounding::up)->units == 2);
    CHECK(c.route(d, 19ms, unit_rounding::down)->units == 1);
    CHECK(c.route(d, -5s, unit_rounding::up)->units == 0);
    CHECK(c.route(d, -5s, unit_rounding::up)->hops == 0);
    CHECK(c.route(d, 0ms, unit_rounding::up)->routing_key == delay_cascade::destination_word(d) + ".0.0.0.0.0.0.0.0.0.0");
}

TEST_CASE("the routing key's length does not depend on the destination or the delay, and fits 255 bytes") {
    auto s = spec_of(cascade_strategy::powers, 36, 7, 1ms);
    const delay_cascade c(s);
    const parking::cascade_destination longest{std::string(255, 'e'), std::string(255, 'r')};
    const auto a = c.route(longest, 0ms, unit_rounding::up);
    const auto b = c.route({"", "q"}, 0ms, unit_rounding::up);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->routing_key.size() == b->routing_key.size());
    const auto far = c.route(longest, c.max_delay(), unit_rounding::up);
    CHECK(far->routing_key.size() <= 255);
    // 64 levels of base 2 (1 ms units pass the TTL bound only up to 38).
    s = {};
    s.levels = 38;
    s.unit = 1ms;
    const delay_cascade deep(s);
    CHECK(deep.route(longest, deep.max_delay(), unit_rounding::up)->routing_key.size() <= 255);
}

// Walks every delay of `c` (0 to its longest, in whole units) through the
// declared topology: each waits exactly its units, after route()'s hops,
// and leaves for `d`. Returns the most hops any delay took.
unsigned walk_every_delay(const delay_cascade& c, const parking::cascade_destination& d) {
    const auto all = c.topology(d);
    const std::int64_t unit = c.spec().unit.count();
    unsigned most = 0;
    for (std::int64_t units = 0; units * unit <= c.max_delay().count(); ++units) {
        const auto r = c.route(d, std::chrono::milliseconds(units * unit), unit_rounding::up);
        REQUIRE(r);
        const auto w = walk(c, all, r->routing_key);
        CHECK(w.waited_ms == units * unit);
        CHECK(w.hops == r->hops);
        CHECK(w.exchange == d.exchange);
        CHECK(w.routing_key == d.routing_key);
        if (c.spec().base == 2) CHECK(w.hops == static_cast<unsigned>(std::popcount(static_cast<std::uint64_t>(units))));
        most = std::max(most, w.hops);
    }
    return most;
}

TEST_CASE("binary, 10 levels: every delay from 0 to 2^10 - 1 units waits exactly its units, never early, and leaves for its destination") {
    const delay_cascade c(spec_of(cascade_strategy::binary, 2, 10, 10ms));
    CHECK(c.max_delay() == 1023 * 10ms);
    CHECK(walk_every_delay(c, {"amq.topic", "orders.created"}) == 10);
}

TEST_CASE("powers of 3, 5 levels: one queue per level and digit; every delay walks once through each") {
    const delay_cascade c(spec_of(cascade_strategy::powers, 3, 5, 7ms));
    const parking::cascade_destination d{"", "work"};
    std::size_t level_queues = 0;
    for (const auto& q : c.topology(d).queues)
        if (!q.arguments.find("x-dead-letter-routing-key") && q.arguments.find("x-message-ttl")) ++level_queues;
    CHECK(level_queues == 5 * 2);
    CHECK(c.max_delay() == 242 * 7ms);
    CHECK(walk_every_delay(c, d) == 5);
    CHECK_FALSE(c.route(d, 243 * 7ms, unit_rounding::up));
}

TEST_CASE("two destinations get their own delivery queues; an unknown one goes to the catch-all") {
    parking::cascade_spec s;
    s.levels = 4;
    const delay_cascade c(s);
    const parking::cascade_destination a{"", "a"}, b{"", "b"};
    CHECK(delay_cascade::destination_word(a) != delay_cascade::destination_word(b));
    CHECK(delay_cascade::destination_word({"a", ""}) != delay_cascade::destination_word({"", "a"}));
    auto all = c.topology(a);
    // b's delivery queue not declared: the delivery exchange routes nothing,
    // and its alternate exchange (fanout) takes the message.
    const auto r = c.route(b, 0ms, unit_rounding::up);
    bool to_delivery_queue = false;
    for (const auto& binding : all.bindings)
        if (binding.source == "tarry.delay.deliver" && topic_match(words(binding.routing_key), 0, words(r->routing_key), 0))
            to_delivery_queue = true;
    CHECK_FALSE(to_delivery_queue);
    bool alternate = false;
    for (const auto& x : all.exchanges)
        if (x.name == "tarry.delay.deliver") {
            const auto* ae = x.arguments.find("alternate-exchange");
            REQUIRE(ae);
            alternate = *ae->get_if<std::string>() == "tarry.delay.unrouted";
        }
    CHECK(alternate);
    CHECK(find_queue(all, "tarry.delay.unrouted") != nullptr);
}

TEST_CASE("quorum cascades dead-letter at least once; classic ones declare no queue type") {
    parking::cascade_spec s;
    s.levels = 3;
    s.queue_type = amqp::queue_kind::quorum;
    const auto quorum = delay_cascade(s).topology();
    const auto* level = find_queue(quorum, "tarry.delay.2.1");
    REQUIRE(level);
    CHECK(string_arg(*level, "x-queue-type") == "quorum");
    CHECK(string_arg(*level, "x-dead-letter-strategy") == "at-least-once");
    CHECK(string_arg(*level, "x-overflow") == "reject-publish");
    CHECK(int_arg(*level, "x-message-ttl") == 4000);
    CHECK(string_arg(*level, "x-dead-letter-exchange") == "tarry.delay.1");
    s.queue_type = amqp::queue_kind::classic;
    const auto classic = delay_cascade(s).topology();
    CHECK_FALSE(find_queue(classic, "tarry.delay.2.1")->arguments.find("x-queue-type"));
}

TEST_CASE("the descriptor message reads back as the spec; a damaged one is refused with a reason") {
    auto s = spec_of(cascade_strategy::powers, 5, 9, 250ms);
    s.queue_type = amqp::queue_kind::quorum;
    s.prefix = "custom";
    const auto m = delay_cascade(s).describe();
    amqp::diagnostics why;
    const auto back = delay_cascade::read_description(m, "custom", why);
    REQUIRE(back);
    CHECK_FALSE(why.code);
    CHECK(back->strategy == s.strategy);
    CHECK(back->base == 5);
    CHECK(back->levels == 9);
    CHECK(back->unit == 250ms);
    CHECK(back->queue_type == amqp::queue_kind::quorum);
    CHECK(back->prefix == "custom");

    auto damaged = m;
    damaged.properties.headers->set("x-tarry-cascade-strategy", std::string("fibonacci"));
    CHECK_FALSE(delay_cascade::read_description(damaged, "custom", why));
    CHECK(why.message.find("unknown strategy 'fibonacci'") != std::string::npos);
    damaged = m;
    damaged.properties.headers->erase("x-tarry-cascade-levels");
    CHECK_FALSE(delay_cascade::read_description(damaged, "custom", why));
    CHECK(why.code == amqp::errc::invalid_argument);
    damaged = m;
    damaged.properties.headers->set("x-tarry-cascade-levels", std::int64_t{90});
    CHECK_FALSE(delay_cascade::read_description(damaged, "custom", why));
    CHECK(why.message.find("levels must be 1 to 64") != std::string::npos);
    damaged = m;
    damaged.properties.headers.reset();
    CHECK_FALSE(delay_cascade::read_description(damaged, "custom", why));
}
