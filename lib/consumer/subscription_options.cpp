// Defaults derived from subscription_options, and their validation.
#include "tarry/consumer/subscription_options.hpp"

#include "tarry/control/tombstone.hpp"

#include <algorithm>
#include <string>

namespace tarry {

std::string subscription_options::dead_letter_queue_name() const {
    return dead_letter_queue.empty() ? queue + ".dead" : dead_letter_queue;
}

namespace {
// The most a lane may hold before handing over with its derived prefetch
// (2 x share + capacity + 64) within basic.qos's 16 bits.
std::size_t largest_share(std::size_t capacity) noexcept {
    const std::size_t room = 65535 - std::min<std::size_t>(capacity + 64, 65535 - 2);
    return std::max<std::size_t>(room / 2, 1);
}
}  // namespace

std::size_t subscription_options::capacity() const noexcept {
    return handlers == handler_kind::coroutines ? max_in_flight : workers;
}

std::size_t subscription_options::effective_channels() const noexcept {
    const std::size_t asked = channels != 0 ? channels : std::clamp<std::size_t>((max_held + 49) / 50, 1, 200);
    if (prefetch != 0) return asked;
    // Enough lanes that each one's share fits a prefetch window.
    const std::size_t share = largest_share(capacity());
    return std::max(asked, (max_held + share - 1) / share);
}

std::size_t subscription_options::lane_hold() const noexcept {
    const std::size_t lanes = effective_channels();
    return (max_held + lanes - 1) / lanes;
}

std::uint16_t subscription_options::effective_prefetch() const noexcept {
    if (prefetch != 0) return prefetch;
    // Room for a sooner job while the next lane takes over, and at least
    // 1 000 so that parking's round trips (publish, confirm, ack) do not
    // throttle the intake (bench/RESULTS.md, scenario H).
    const std::size_t wanted = std::max<std::size_t>(2 * lane_hold() + capacity() + 64, 1000);
    return static_cast<std::uint16_t>(std::min<std::size_t>(wanted, 65535));
}

std::size_t subscription_options::effective_max_due_waiting() const noexcept {
    if (max_due_waiting != 0) return max_due_waiting;
    return std::max<std::size_t>(64 * capacity(), 512);
}

std::chrono::milliseconds subscription_options::backlog_margin() const noexcept {
    const auto tenth = broker_consumer_timeout / 10;
    const auto wanted = std::max<std::chrono::milliseconds>(tenth, std::chrono::seconds(2));
    return std::min(wanted, broker_consumer_timeout / 2);
}

std::chrono::milliseconds subscription_options::effective_min_park_ttl() const noexcept {
    if (min_park_ttl.count() != 0) return min_park_ttl;
    return std::min<std::chrono::milliseconds>(std::chrono::seconds(1), hold_horizon / 2);
}

namespace {
std::string ms(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

// Every message names the option at fault first ("workers: ...",
// "hold_horizon (...) must ..."): that name is the problem's option.
option_problem problem(std::string message) {
    const auto end = message.find_first_not_of("abcdefghijklmnopqrstuvwxyz_");
    return {message.substr(0, end), std::move(message)};
}
// The options of the control stream's reader.
std::optional<option_problem> control_stream_problem(const subscription_options& o) {
    if (o.control_catch_up_timeout.count() <= 0)
        return problem("control_catch_up_timeout: must be positive (how long a start waits to read the control "
                       "stream to its end)");
    if (o.tombstone_retention.count() <= 0 || o.tombstone_retention > control::stream_max_age)
        return problem("tombstone_retention (" + ms(o.tombstone_retention) +
                       ") must be positive and at most the control stream's x-max-age (" +
                       ms(control::stream_max_age) + ")");
    return std::nullopt;
}

// The options of lifecycle events, once publish_events is on.
std::optional<option_problem> events_problem(const subscription_options& o) {
    // The routing key `<event>.<queue>` always fits its 255 bytes: the
    // queue's name has at most 200.
    if (o.events_exchange.empty())
        return problem("events_exchange: an exchange name is needed when publish_events is on");
    if (o.events_exchange.size() > 255)
        return problem("events_exchange: the name is too long (" + std::to_string(o.events_exchange.size()) +
                       " bytes; at most 255)");
    if (o.events_exchange.rfind("amq.", 0) == 0)
        return problem("events_exchange: '" + o.events_exchange +
                       "' starts with amq., which the broker reserves (it refuses to declare it)");
    if (o.max_events_waiting == 0)
        return problem("max_events_waiting: at least one event must be able to wait, or every event is dropped");
    if (o.events_per_message == 0 || o.events_per_message > subscription_options::max_events_per_message)
        return problem("events_per_message: from 1 to " + std::to_string(subscription_options::max_events_per_message) + " (got " +
                       std::to_string(o.events_per_message) + ")");
    return std::nullopt;
}

}  // namespace

std::optional<option_problem> validate(const subscription_options& o) {
    if (o.queue.empty()) return problem("queue: a queue name is required");
    if (o.queue.size() > 200)
        return problem("queue: the name is too long (" + std::to_string(o.queue.size()) +
               " bytes; at most 200, leaving room for the .wait/.dead suffixes)");
    if (o.handlers == handler_kind::threads && o.workers == 0)
        return problem("workers: at least one worker thread is needed");
    if (o.handlers == handler_kind::coroutines && o.max_in_flight == 0)
        return problem("max_in_flight: at least one asynchronous job must be able to run");
    if (o.default_delay.count() < 0) return problem("default_delay: must not be negative");
    if (o.max_delay && o.max_delay->count() < 0) return problem("max_delay: must not be negative");
    if (o.max_delay && o.default_delay > *o.max_delay)
        return problem("default_delay (" + ms(o.default_delay) + ") is above max_delay (" +
               ms(*o.max_delay) + ")");
    if (o.broker_consumer_timeout.count() <= 0)
        return problem("broker_consumer_timeout: must be positive (the broker's consumer_timeout)");
    if (o.hold_horizon + o.backlog_margin() > o.broker_consumer_timeout)
        return problem("hold_horizon (" + ms(o.hold_horizon) + ") must leave " + ms(o.backlog_margin()) +
               " before the broker's consumer_timeout (" + ms(o.broker_consumer_timeout) +
               "): a job held longer would be given back as it falls due, or make the broker "
               "close the channel");
    if (o.min_park_ttl.count() < 0) return problem("min_park_ttl: must not be negative (0 = automatic)");
    if (o.park_margin.count() < 0) return problem("park_margin: must not be negative");
    const auto shortest = o.effective_min_park_ttl();
    if (shortest.count() <= 0 || o.hold_horizon < shortest + o.park_margin)
        return problem("hold_horizon (" + ms(o.hold_horizon) + ") must be at least min_park_ttl + " +
               "park_margin (" + ms(shortest + o.park_margin) +
               "), or a job beyond it could not be parked");
    if (o.parking_strategy)
        if (auto why = parking::check(*o.parking_strategy); why.code) return problem("parking_strategy: " + why.message);
    if (o.max_held == 0) return problem("max_held: at least one job must be holdable");
    if (o.channels > 1000)
        return problem("channels: " + std::to_string(o.channels) + " consuming channels is too many (at most 1000)");
    if (o.channels <= 1000 && o.effective_channels() > 1000)
        return problem("max_held: " + std::to_string(o.max_held) + " jobs would need " +
               std::to_string(o.effective_channels()) +
               " consuming channels to keep each prefetch within 65 535 (at most 1000)");
    if (o.max_held_bytes == 0) return problem("max_held_bytes: must be positive");
    if (o.shutdown_grace.count() < 0) return problem("shutdown_grace: must not be negative");
    if (o.copy_confirm_timeout.count() <= 0)
        return problem("copy_confirm_timeout: must be positive (a copy's confirm is waited for at most this long)");
    if (o.republish_backoff.kind != retry::shape::custom && o.republish_backoff.base.count() <= 0)
        return problem("republish_backoff: the pause must be positive, or a refused copy is retried at once, "
               "over and over");
    if (auto p = control_stream_problem(o)) return p;
    if (o.publish_events) return events_problem(o);
    return std::nullopt;
}

}  // namespace tarry
