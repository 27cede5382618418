// Fuzz target: the delay cascade's descriptor and routes
// (tarry/parking/delay_cascade.hpp, docs/cascades.md).
//
// Input layout:
//   bytes 0-7   a delay in ms (big-endian, signed)
//   byte 8      bit 0: round down (else up)
//   the rest    the descriptor message's headers: an AMQP field table (u32
//               length + entries); inputs that do not decode are skipped.
//               An entry named "s", "b", "l", "u" or "q" is renamed
//               x-tarry-cascade-strategy, -base, -levels, -unit-ms or
//               -queue-type, so that mutations reach them easily.
//
// Properties:
// - read_description never throws; it accepts a spec exactly when check()
//   accepts it (and then the headers name a known strategy and queue type),
//   and refuses with invalid_argument and a reason otherwise;
// - an accepted spec makes a delay_cascade; describe() reads back as it;
// - route(): nothing exactly when the delay, rounded as asked, is above
//   max_delay(); otherwise its key is the destination word and `levels`
//   digits below the base, whose value is the units, never less than the
//   delay (up) or more (down), hops = the non-zero digits, and at most 255
//   bytes; the key's length does not depend on the delay;
// - topology(): every level exchange routes any key to exactly one place
//   (checked for the routed key by matching its patterns), the TTLs are
//   within RabbitMQ's bound.
#include "fuzz_support.hpp"

#include "tarry/parking/delay_cascade.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace {

using namespace tarry;
using parking::delay_cascade;

std::vector<std::string> words_of(const std::string& key) {
    std::vector<std::string> out(1);
    for (char c : key) {
        if (c == '.') out.emplace_back();
        else out.back() += c;
    }
    return out;
}

// Patterns of words and `*` only (what topology() writes): same length, each
// word equal or `*`.
bool matches(const std::string& pattern, const std::vector<std::string>& key) {
    const auto p = words_of(pattern);
    if (p.size() != key.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p[i] != "*" && p[i] != key[i]) return false;
    return true;
}

void rename(amqp::wire::field_table& t) {
    static const std::pair<const char*, const char*> names[] = {{"s", "x-tarry-cascade-strategy"},
                                                                 {"b", "x-tarry-cascade-base"},
                                                                 {"l", "x-tarry-cascade-levels"},
                                                                 {"u", "x-tarry-cascade-unit-ms"},
                                                                 {"q", "x-tarry-cascade-queue-type"}};
    amqp::wire::field_table out;
    for (const auto& e : t.entries()) {
        std::string name = e.name;
        for (const auto& [short_name, long_name] : names)
            if (name == short_name) name = long_name;
        out.set(name, e.value);
    }
    t = std::move(out);
}

void check_routes(const delay_cascade& c, std::chrono::milliseconds delay, parking::unit_rounding rounding) {
    const parking::cascade_destination to{"x", "k"};
    const auto r = c.route(to, delay, rounding);
    const std::int64_t unit = c.spec().unit.count();
    const std::int64_t ms = delay.count() > 0 ? delay.count() : 0;
    // Whole units, as asked (in 128 bits: no overflow).
    const __int128 units = rounding == parking::unit_rounding::up ? (static_cast<__int128>(ms) + unit - 1) / unit
                                                                  : static_cast<__int128>(ms) / unit;
    const __int128 max_units = c.max_delay().count() / unit;
    tarry_fuzz::check(static_cast<bool>(r) == (units <= max_units), "route: refused exactly above max_delay");
    if (!r) return;
    tarry_fuzz::check(static_cast<__int128>(r->units) == units, "route: units as rounded");
    const auto w = words_of(r->routing_key);
    tarry_fuzz::check(w.size() == c.spec().levels + 1, "route: the word and one digit per level");
    tarry_fuzz::check(w[0] == delay_cascade::destination_word(to), "route: the destination word first");
    tarry_fuzz::check(r->routing_key.size() <= 255, "route: a key of at most 255 bytes");
    tarry_fuzz::check(r->routing_key.size() == c.route(to, std::chrono::milliseconds(0), rounding)->routing_key.size() ||
                          c.spec().base > 10,
                      "route: the key's length does not depend on the delay (one-character digits)");
    unsigned __int128 value = 0;
    unsigned hops = 0;
    for (std::size_t i = 1; i < w.size(); ++i) {
        const unsigned long d = std::stoul(w[i]);
        tarry_fuzz::check(d < c.spec().base, "route: digits below the base");
        if (d != 0) ++hops;
        value = value * c.spec().base + d;
    }
    tarry_fuzz::check(value == static_cast<unsigned __int128>(r->units), "route: the digits are the units");
    tarry_fuzz::check(hops == r->hops, "route: hops are the non-zero digits");
    // Each level exchange sends the key to exactly one place.
    if (c.spec().levels * c.spec().base > 200) return;  // keep an execution short
    const auto t = c.topology();
    for (unsigned k = 0; k < c.spec().levels; ++k) {
        const std::string exchange = c.spec().prefix + "." + std::to_string(k);
        int places = 0;
        for (const auto& b : t.bindings)
            if (b.source == exchange && matches(b.routing_key, w)) ++places;
        tarry_fuzz::check(places == 1, "topology: a level routes a key to exactly one place");
    }
    for (const auto& q : t.queues)
        if (const auto* ttl = q.arguments.find("x-message-ttl"))
            tarry_fuzz::check(*amqp::wire::integer_of(*ttl) <= parking::max_queue_ttl.count(), "topology: TTLs in bounds");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < 9) return 0;
    std::int64_t raw = 0;
    for (int i = 0; i < 8; ++i) raw = static_cast<std::int64_t>((static_cast<std::uint64_t>(raw) << 8) | data[i]);
    const auto delay = std::chrono::milliseconds(raw);
    const auto rounding = (data[8] & 1) ? parking::unit_rounding::down : parking::unit_rounding::up;
    amqp::message m;
    if (size > 9) {
        amqp::wire::byte_reader r(std::span<const std::uint8_t>(data + 9, size - 9));
        try {
            m.properties.headers = amqp::wire::decode_table(r);
        } catch (const std::exception&) {
            return 0;
        }
        rename(*m.properties.headers);
    }
    amqp::diagnostics why;
    const auto spec = delay_cascade::read_description(m, "fz", why);
    if (!spec) {
        tarry_fuzz::check(why.code == amqp::errc::invalid_argument && !why.message.empty(),
                          "read_description: a refusal has invalid_argument and a reason");
        return 0;
    }
    tarry_fuzz::check(!why.code, "read_description: no reason on success");
    tarry_fuzz::check(!parking::check(*spec).code, "read_description: accepts only what check() accepts");
    const delay_cascade c(*spec);
    amqp::diagnostics again;
    const auto back = delay_cascade::read_description(c.describe(), "fz", again);
    tarry_fuzz::check(back && back->strategy == spec->strategy && back->base == spec->base &&
                          back->levels == spec->levels && back->unit == spec->unit &&
                          back->queue_type == spec->queue_type,
                      "describe: reads back as the spec");
    check_routes(c, delay, rounding);
    return 0;
}
