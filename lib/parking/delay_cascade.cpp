// The delay cascade's names, bindings and routes (see the header).
#include "tarry/parking/delay_cascade.hpp"

#include <cstdio>
#include <stdexcept>

namespace tarry::parking {

namespace {

constexpr unsigned max_levels = 64;
constexpr unsigned max_base = 36;
constexpr std::size_t max_prefix = 100;

// base^exp, or nothing past `limit`.
std::optional<std::uint64_t> power_within(std::uint64_t base, unsigned exp, std::uint64_t limit) {
    std::uint64_t p = 1;
    for (unsigned i = 0; i < exp; ++i) {
        if (p > limit / base) return std::nullopt;
        p *= base;
    }
    return p;
}

amqp::diagnostics refusal(std::string why) {
    return amqp::diagnostics::from(amqp::errc::invalid_argument, "delay cascade: " + std::move(why));
}

}  // namespace

std::string_view to_string(cascade_strategy s) noexcept { return s == cascade_strategy::binary ? "binary" : "powers"; }

std::optional<cascade_strategy> strategy_from_string(std::string_view text) noexcept {
    if (text == "binary") return cascade_strategy::binary;
    if (text == "powers") return cascade_strategy::powers;
    return std::nullopt;
}

amqp::diagnostics check(const cascade_spec& spec) {
    if (spec.strategy == cascade_strategy::binary && spec.base != 2)
        return refusal("the binary strategy has base 2, not " + std::to_string(spec.base));
    if (spec.base < 2 || spec.base > max_base)
        return refusal("the base must be 2 to " + std::to_string(max_base) + ", not " + std::to_string(spec.base));
    if (spec.levels < 1 || spec.levels > max_levels)
        return refusal("the levels must be 1 to " + std::to_string(max_levels) + ", not " +
                       std::to_string(spec.levels));
    if (spec.unit.count() < 1) return refusal("the unit must be at least 1 ms");
    if (spec.prefix.empty() || spec.prefix.size() > max_prefix)
        return refusal("the prefix must be 1 to " + std::to_string(max_prefix) + " bytes long");
    const auto unit_ms = static_cast<std::uint64_t>(spec.unit.count());
    const auto ttl_units = static_cast<std::uint64_t>(max_queue_ttl.count()) / unit_ms;
    const auto top = power_within(spec.base, spec.levels - 1, ttl_units);
    if (!top || *top * (spec.base - 1) > ttl_units)
        return refusal("the top level's queue would wait longer than RabbitMQ's longest x-message-ttl (" +
                       std::to_string(max_queue_ttl.count()) + " ms, ten years): use fewer levels or a shorter unit");
    return {};
}

delay_cascade::delay_cascade(cascade_spec spec) : spec_(std::move(spec)) {
    if (auto why = check(spec_); why.code) throw std::invalid_argument(why.message);
    // (base - 1)·base^(levels-1) fits in the TTL bound, so base^levels - 1
    // = that + (base^(levels-1) - 1) fits in 64 bits.
    const std::uint64_t top = *power_within(spec_.base, spec_.levels - 1, UINT64_MAX);
    max_units_ = top * (spec_.base - 1) + (top - 1);
}

std::chrono::milliseconds delay_cascade::max_delay() const noexcept {
    return std::chrono::milliseconds(static_cast<std::int64_t>(max_units_) * spec_.unit.count());
}

std::string delay_cascade::level_exchange(unsigned level) const { return spec_.prefix + "." + std::to_string(level); }

std::string delay_cascade::level_queue(unsigned level, unsigned digit) const {
    return level_exchange(level) + "." + std::to_string(digit);
}

std::string delay_cascade::delivery_exchange() const { return spec_.prefix + ".deliver"; }

std::string delay_cascade::next_exchange(unsigned level) const {
    return level == 0 ? delivery_exchange() : level_exchange(level - 1);
}

std::string delay_cascade::entry_exchange() const { return level_exchange(spec_.levels - 1); }

std::string delay_cascade::descriptor_queue() const { return spec_.prefix + ".topology"; }

cascade_topology delay_cascade::topology() const {
    cascade_topology t;
    const auto exchange = [](std::string name, std::string type) {
        amqp::exchange_options x;
        x.name = std::move(name);
        x.type = std::move(type);
        x.durable = true;
        return x;
    };
    const auto queue = [](std::string name) {
        amqp::queue_options q;
        q.name = std::move(name);
        q.durable = true;
        return q;
    };
    const std::string unrouted = spec_.prefix + ".unrouted";
    t.exchanges.push_back(exchange(unrouted, "fanout"));
    auto deliver = exchange(delivery_exchange(), "topic");
    deliver.arguments.set("alternate-exchange", unrouted);
    t.exchanges.push_back(std::move(deliver));
    for (unsigned k = 0; k < spec_.levels; ++k) t.exchanges.push_back(exchange(level_exchange(k), "topic"));

    auto lost = queue(unrouted);
    amqp::add_queue_kind_arguments(lost.arguments, spec_.queue_type, false);
    t.queues.push_back(std::move(lost));
    t.bindings.push_back({unrouted, unrouted, false, ""});
    auto descriptor = queue(descriptor_queue());
    descriptor.arguments.set("x-max-length", std::int64_t{1});
    amqp::add_queue_kind_arguments(descriptor.arguments, spec_.queue_type, false);
    t.queues.push_back(std::move(descriptor));

    // Level k's exchange sends a message straight to the queue of the
    // highest non-zero digit at or below k (or, all of them 0, to the
    // delivery exchange): one routing step per hop. Every pattern is words
    // and `*` only, one per word of the key: RabbitMQ matches those without
    // backtracking (a leading `#`, and exchange-to-exchange chains of one
    // level each, measured several times slower).
    const auto pattern = [this](unsigned k, unsigned j, std::string digit) {
        std::string p = "*";  // the destination word
        for (unsigned i = spec_.levels; i-- > 0;) {
            if (i > k || i < j) p += ".*";
            else if (i > j) p += ".0";
            else p += "." + digit;
        }
        return p;
    };
    for (unsigned k = 0; k < spec_.levels; ++k) {
        // Every digit from k down is 0: delivered. (pattern(k, 0, "0") has
        // 0 at level 0 too.)
        t.bindings.push_back({level_exchange(k), delivery_exchange(), true, pattern(k, 0, "0")});
        for (unsigned j = 0; j <= k; ++j)
            for (unsigned d = 1; d < spec_.base; ++d)
                t.bindings.push_back({level_exchange(k), level_queue(j, d), false, pattern(k, j, std::to_string(d))});
    }
    std::uint64_t weight = 1;  // base^k units
    for (unsigned k = 0; k < spec_.levels; ++k, weight *= spec_.base) {
        for (unsigned d = 1; d < spec_.base; ++d) {
            auto q = queue(level_queue(k, d));
            q.arguments.set("x-message-ttl", static_cast<std::int64_t>(d * weight) * spec_.unit.count());
            q.arguments.set("x-dead-letter-exchange", next_exchange(k));
            amqp::add_queue_kind_arguments(q.arguments, spec_.queue_type, true);
            t.queues.push_back(std::move(q));
        }
    }
    return t;
}

std::string delay_cascade::destination_word(const cascade_destination& destination) {
    std::uint64_t h = 14695981039346656037ull;
    const auto mix = [&h](std::string_view s) {
        for (unsigned char c : s) {
            h ^= c;
            h *= 1099511628211ull;
        }
    };
    mix(destination.exchange);
    mix(std::string_view("\0", 1));
    mix(destination.routing_key);
    char word[17];
    std::snprintf(word, sizeof word, "%016llx", static_cast<unsigned long long>(h));
    return word;
}

cascade_topology delay_cascade::delivery(const cascade_destination& destination) const {
    const std::string word = destination_word(destination);
    amqp::queue_options q;
    q.name = delivery_exchange() + "." + word;
    q.durable = true;
    q.arguments.set("x-message-ttl", std::int64_t{0});
    q.arguments.set("x-dead-letter-exchange", destination.exchange);
    q.arguments.set("x-dead-letter-routing-key", destination.routing_key);
    amqp::add_queue_kind_arguments(q.arguments, spec_.queue_type, true);
    cascade_topology t;
    std::string key = word;  // the word, then any digits
    for (unsigned k = 0; k < spec_.levels; ++k) key += ".*";
    t.bindings.push_back({delivery_exchange(), q.name, false, std::move(key)});
    t.queues.push_back(std::move(q));
    return t;
}

cascade_topology delay_cascade::topology(const cascade_destination& destination) const {
    auto t = topology();
    auto d = delivery(destination);
    t.queues.insert(t.queues.end(), d.queues.begin(), d.queues.end());
    t.bindings.insert(t.bindings.end(), d.bindings.begin(), d.bindings.end());
    return t;
}

std::optional<cascade_route> delay_cascade::route(const cascade_destination& destination,
                                                  std::chrono::milliseconds delay, unit_rounding rounding) const {
    const std::int64_t unit = spec_.unit.count();
    std::uint64_t units = 0;
    if (delay.count() > 0) {
        const auto ms = static_cast<std::uint64_t>(delay.count());
        units = ms / static_cast<std::uint64_t>(unit);
        if (rounding == unit_rounding::up && ms % static_cast<std::uint64_t>(unit) != 0) ++units;
    }
    if (units > max_units_) return std::nullopt;
    cascade_route r;
    r.units = units;
    std::vector<unsigned> digits(spec_.levels);  // digits[k]: level k's
    for (unsigned k = 0; k < spec_.levels; ++k, units /= spec_.base) {
        digits[k] = static_cast<unsigned>(units % spec_.base);
        if (digits[k] != 0) ++r.hops;
    }
    r.routing_key = destination_word(destination);
    for (unsigned k = spec_.levels; k-- > 0;) r.routing_key += "." + std::to_string(digits[k]);
    return r;
}

amqp::message delay_cascade::describe() const {
    const std::string kind(amqp::to_string(spec_.queue_type));
    amqp::basic_properties p;
    p.content_type = "text/plain";
    p.delivery_mode = 2;
    p.headers.emplace();
    p.headers->set("x-tarry-cascade-strategy", std::string(to_string(spec_.strategy)));
    p.headers->set("x-tarry-cascade-base", static_cast<std::int64_t>(spec_.base));
    p.headers->set("x-tarry-cascade-levels", static_cast<std::int64_t>(spec_.levels));
    p.headers->set("x-tarry-cascade-unit-ms", static_cast<std::int64_t>(spec_.unit.count()));
    p.headers->set("x-tarry-cascade-queue-type", kind);
    const std::string text = "tarry delay cascade: " + std::string(to_string(spec_.strategy)) + ", base " +
                             std::to_string(spec_.base) + ", " + std::to_string(spec_.levels) + " levels of " +
                             std::to_string(spec_.unit.count()) + " ms, " + kind + " queues";
    return amqp::message(text, std::move(p));
}

std::optional<cascade_spec> delay_cascade::read_description(const amqp::message& m, std::string prefix,
                                                            amqp::diagnostics& why) {
    why = {};
    const auto fail = [&why](std::string what) -> std::optional<cascade_spec> {
        why = refusal("the descriptor message " + std::move(what));
        return std::nullopt;
    };
    cascade_spec spec;
    spec.prefix = std::move(prefix);
    const std::string* strategy = amqp::wire::text_header(m.properties, "x-tarry-cascade-strategy");
    if (!strategy) return fail("has no x-tarry-cascade-strategy header");
    auto s = strategy_from_string(*strategy);
    if (!s) return fail("names an unknown strategy '" + *strategy + "'");
    spec.strategy = *s;
    const auto base = amqp::wire::integer_header(m.properties, "x-tarry-cascade-base");
    const auto levels = amqp::wire::integer_header(m.properties, "x-tarry-cascade-levels");
    const auto unit = amqp::wire::integer_header(m.properties, "x-tarry-cascade-unit-ms");
    if (!base || !levels || !unit) return fail("lacks an integer base, levels or unit-ms header");
    if (*base < 0 || *base > 1000 || *levels < 0 || *levels > 1000) return fail("has a base or levels out of range");
    spec.base = static_cast<unsigned>(*base);
    spec.levels = static_cast<unsigned>(*levels);
    spec.unit = std::chrono::milliseconds(*unit);
    if (const std::string* kind = amqp::wire::text_header(m.properties, "x-tarry-cascade-queue-type")) {
        const auto k = amqp::queue_kind_from_string(*kind);
        if (!k) return fail("names an unknown queue type '" + *kind + "'");
        spec.queue_type = *k;
    }
    if (auto bad = check(spec); bad.code) {
        why = std::move(bad);
        return std::nullopt;
    }
    return spec;
}

}  // namespace tarry::parking
