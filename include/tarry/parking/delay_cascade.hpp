// Broker-side delayed delivery to any exchange and routing key, without
// plugins: a cascade of TTL queues that dead-letter into each other
// (docs/cascades.md). Pure values: the names, arguments and bindings to
// declare, and the routing key that makes a message wait a given delay.
//
// Level k (0 = the shortest) is a topic exchange `<prefix>.<k>` and, for
// each non-zero digit d of the base, a queue `<prefix>.<k>.<d>` whose
// x-message-ttl is d·base^k units and which dead-letters (keeping the
// routing key) to level k-1's exchange, level 0's to the delivery exchange
// `<prefix>.deliver`. A message enters at the top level's exchange with the
// routing key `<destination word>.<digit levels-1>. ... .<digit 0>`: the
// remaining delay in base `base`, least significant last. Level k's exchange
// routes a message straight to the queue of its highest non-zero digit at
// or below k, or, all of them 0, to the delivery exchange: one pattern per
// (level j <= k, digit d), of words and `*` only (`*`, then `*` for the
// digits above k, `0` for those from k down to j+1, d, `*` below j). So a
// message waits only at the levels whose digit is not 0, any delay takes at
// most `levels` hops, each hop is one routing step, and the key has the
// same length at every hop. The delivery exchange routes
// `<destination word>` followed by `levels` times `.*` to that
// destination's delivery queue
// (`<prefix>.deliver.<word>`: x-message-ttl 0, dead-lettering at once to the
// destination's exchange and routing key), declared on first use; whatever
// no delivery queue takes goes to its alternate exchange `<prefix>.unrouted`
// and the queue of that name rather than blocking a level. The queue
// `<prefix>.topology` holds one message describing the cascade (describe()),
// so that publishers need only the prefix.
#pragma once

#include "tarry/amqp/channel_options.hpp"
#include "tarry/amqp/error.hpp"
#include "tarry/amqp/message.hpp"
#include "tarry/amqp/queue_kind.hpp"
#include "tarry/amqp/topology.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tarry::parking {

/// How a cascade counts a delay: in which base, with how many queues per
/// level.
enum class cascade_strategy {
    binary,  ///< base 2, one queue per level
    /// base N (2 to 36), N - 1 queues per level (one per non-zero digit: a
    /// message that passed one queue twice without a rejection between
    /// would be a dead-letter cycle, which RabbitMQ drops silently)
    powers
};

/// What a cascade is. A plain value; check() says whether it can be one.
struct cascade_spec {
    cascade_strategy strategy = cascade_strategy::binary;  ///< binary or powers
    unsigned base = 2;                          ///< 2 for binary; 2 to 36 for powers
    unsigned levels = 28;                       ///< 1 to 64
    std::chrono::milliseconds unit{1000};       ///< at least 1 ms
    amqp::queue_kind queue_type = amqp::queue_kind::classic;  ///< of every queue declared
    std::string prefix = "tarry.delay";         ///< of every name declared; 1 to 100 bytes
};

/// The longest x-message-ttl RabbitMQ 3.10 accepts (ten years of 365 days;
/// one more is refused with 406 value_too_large).
inline constexpr std::chrono::milliseconds max_queue_ttl{315'360'000'000};

/// Why `spec` cannot be a cascade (amqp::errc::invalid_argument and a
/// sentence naming the field), or an empty code. The largest queue TTL,
/// (base - 1)·base^(levels-1) units, must not pass max_queue_ttl.
amqp::diagnostics check(const cascade_spec& spec);

/// Where a delayed message goes in the end: any exchange (the default
/// exchange "" too) and routing key.
struct cascade_destination {
    std::string exchange;     ///< where it is published in the end ("" = default exchange)
    std::string routing_key;  ///< with this routing key
};

/// A binding of a cascade (the same as any other: tarry/amqp/topology.hpp).
using cascade_binding = amqp::binding;

/// What a cascade declares, in order: exchanges, then queues, then
/// bindings (tarry/amqp/topology.hpp).
using cascade_topology = amqp::topology;

/// How a delay becomes whole units.
enum class unit_rounding {
    up,   ///< for delivery: never early
    down  ///< for parking: a parked job must come back before it is due
};

/// A message's way through the cascade.
struct cascade_route {
    std::string routing_key;  ///< for the entry exchange
    std::uint64_t units = 0;  ///< the delay it will wait, in units
    unsigned hops = 0;        ///< queues it waits in (its non-zero digits)
};

/// The names, arguments, bindings and routes of one cascade (see this
/// header's opening comment). A pure value; any thread.
class delay_cascade {
public:
    /// Throws std::invalid_argument with check()'s sentence.
    explicit delay_cascade(cascade_spec spec);

    /// The spec given at construction.
    const cascade_spec& spec() const noexcept { return spec_; }
    /// (base^levels - 1) units: the longest delay it can make.
    std::chrono::milliseconds max_delay() const noexcept;
    /// The top level's exchange, where every delayed message is published.
    std::string entry_exchange() const;
    /// `<prefix>.topology`, whose one message describes the cascade.
    std::string descriptor_queue() const;
    /// Every exchange, queue and binding but the delivery queues.
    cascade_topology topology() const;
    /// `destination`'s delivery queue and its binding (declare it before
    /// the first message for that destination enters).
    cascade_topology delivery(const cascade_destination& destination) const;
    /// topology() and delivery(destination) together: what a cascade with
    /// one destination known in advance declares (a consumer's parking).
    cascade_topology topology(const cascade_destination& destination) const;
    /// The word naming `destination` in routing keys: 16 hex digits of a
    /// 64-bit FNV-1a hash of its exchange and routing key, so a key stays
    /// short whatever the destination.
    static std::string destination_word(const cascade_destination& destination);
    /// The route of a message for `destination` delayed by `delay` (a
    /// negative delay is 0), rounded to whole units as `rounding` says;
    /// nothing when that is more than max_delay().
    std::optional<cascade_route> route(const cascade_destination& destination, std::chrono::milliseconds delay,
                                       unit_rounding rounding) const;

    /// The descriptor message: headers x-tarry-cascade-strategy ("binary"
    /// or "powers"), -base, -levels, -unit-ms, -queue-type ("classic" or
    /// "quorum"), and a one-line text body.
    amqp::message describe() const;
    /// The spec a descriptor message describes (prefix: `prefix`), or why
    /// it does not describe one (amqp::errc::invalid_argument).
    static std::optional<cascade_spec> read_description(const amqp::message& m, std::string prefix,
                                                        amqp::diagnostics& why);

private:
    std::string level_exchange(unsigned level) const;
    std::string level_queue(unsigned level, unsigned digit) const;
    std::string next_exchange(unsigned level) const;
    std::string delivery_exchange() const;

    cascade_spec spec_;
    std::uint64_t max_units_ = 0;
};

/// "binary" or "powers".
std::string_view to_string(cascade_strategy s) noexcept;
/// "binary" or "powers"; nothing for any other text.
std::optional<cascade_strategy> strategy_from_string(std::string_view text) noexcept;

}  // namespace tarry::parking
