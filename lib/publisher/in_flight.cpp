// Unconfirmed publishes, return matching and the confirm deadline (see
// in_flight.hpp).
#include "in_flight.hpp"

#include <algorithm>
#include <functional>
#include <string_view>

namespace tarry::detail {

namespace {

// What a basic.return is matched by: exchange, routing key, message_id and
// body, hashed together.
std::size_t fingerprint(std::string_view exchange, std::string_view routing_key, const amqp::message& m) {
    const std::hash<std::string_view> h;
    std::size_t f = h(exchange);
    const auto mix = [&f](std::size_t v) { f ^= v + 0x9e3779b97f4a7c15ULL + (f << 6) + (f >> 2); };
    mix(h(routing_key));
    mix(m.properties.message_id ? h(*m.properties.message_id) + 1 : 0);  // unset ≠ ""
    mix(h(m.body_view()));
    return f;
}

}  // namespace

std::uint64_t in_flight::add(std::uint64_t channel, std::string_view exchange, std::string_view routing_key,
                             const amqp::message& msg, done_handler done, time_point sent) {
    const std::uint64_t id = ++next_id_;
    entries_.push_back({id, channel, fingerprint(exchange, routing_key, msg), sent,
                        std::make_unique<done_handler>(std::move(done)), nullptr});
    return id;
}

bool in_flight::match_return(std::uint64_t channel, std::string_view exchange, std::string_view routing_key,
                             const amqp::message& msg, amqp::diagnostics why) {
    const std::size_t f = fingerprint(exchange, routing_key, msg);
    for (auto& e : entries_) {
        if (e.channel == channel && e.fingerprint == f && !e.returned) {
            e.returned = std::make_unique<amqp::diagnostics>(std::move(why));
            return true;
        }
    }
    return false;
}

std::optional<in_flight::landed> in_flight::land(std::uint64_t id) {
    const auto it = std::lower_bound(entries_.begin(), entries_.end(), id,
                                     [](const entry& e, std::uint64_t v) { return e.id < v; });
    if (it == entries_.end() || it->id != id) return std::nullopt;
    landed out{std::move(*it->done), std::nullopt};
    if (it->returned) out.returned = std::move(*it->returned);
    entries_.erase(it);
    return out;
}

std::optional<in_flight::time_point> in_flight::next_deadline(std::chrono::milliseconds timeout) const {
    if (entries_.empty()) return std::nullopt;
    return entries_.front().sent + timeout;
}

std::optional<std::uint64_t> in_flight::overdue_channel(time_point now, std::chrono::milliseconds timeout) const {
    if (entries_.empty() || now < entries_.front().sent + timeout) return std::nullopt;
    return entries_.front().channel;
}

std::vector<std::unique_ptr<in_flight::done_handler>> in_flight::give_up(std::uint64_t channel) {
    std::vector<std::unique_ptr<done_handler>> out;
    for (auto& e : entries_)
        if (e.channel == channel) out.push_back(std::move(e.done));
    std::erase_if(entries_, [&](const entry& e) { return e.channel == channel; });
    return out;
}

}  // namespace tarry::detail
