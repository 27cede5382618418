// The publisher's front (see tarry/publisher/publisher.hpp): due times,
// refusals, the headers written on the caller's thread, far jobs parked
// through the delay cascade, and the hand-off to the strand that owns the
// channel.
#include "tarry/publisher/publisher.hpp"

#include "publisher_parking.hpp"
#include "publisher_state.hpp"
#include "scheduled_message.hpp"

#include "tarry/contract/schedule_headers.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>

namespace tarry {

namespace asio = boost::asio;

wall_time job_schedule::due(wall_time now) const noexcept {
    switch (kind_) {
        case kind::now: return now;
        case kind::at: return at_;
        case kind::after: break;
        case kind::invalid: return wall_time::min();
    }
    // now + after_, saturating (the room left on each side, in microseconds,
    // rounded towards zero, always fits).
    using us = std::chrono::microseconds;
    const wall_time from = std::max(now, wall_time{});
    const auto ahead = std::chrono::duration_cast<us>(wall_time::max() - from);
    const auto behind = std::chrono::duration_cast<us>(from - wall_time{});
    if (after_ > ahead) return wall_time::max();
    if (after_ < -behind) return wall_time::min();
    return now + std::chrono::duration_cast<wall_time::duration>(after_);
}


publisher::publisher(amqp::connection& conn, publisher_options options)
    : s_(std::make_shared<state>(conn, options)) {}

publisher::~publisher() { s_->detach(); }

void publisher::publish_(std::string exchange, std::string routing_key, amqp::message msg,
                         const job_schedule* when, completion h) {
    std::optional<std::chrono::milliseconds> park;
    if (when != nullptr) {
        const wall_time now = std::chrono::system_clock::now();
        if (auto refused = detail::schedule_message(msg, *when, now, contract::next_generation(now), s_->options);
            refused.code)
            return s_->refuse(std::move(h), std::move(refused));
        if (!msg.properties.expiration) park = detail::publisher_park_wait(when->due(now), now, s_->options);
    }
    s_->ensure_channel();  // from here, while the connection is certainly alive
    if (park)
        return s_->send_delayed({std::move(exchange), std::move(routing_key), std::move(msg), std::move(h)}, *park,
                                parking::unit_rounding::down, true);
    asio::post(s_->strand, [s = s_, o = state::outgoing{std::move(exchange), std::move(routing_key),
                                                         std::move(msg), std::move(h)}]() mutable {
        s->enqueue(std::move(o));
    });
}

amqp::diagnostics publisher::last_error() const { return s_->last_error(); }

publisher_stats publisher::stats() const noexcept {
    publisher_stats out;
    out.published = s_->published.load();
    out.confirmed = s_->confirmed.load();
    out.nacked = s_->nacked.load();
    out.returned = s_->returned.load();
    out.failed = s_->failed.load();
    return out;
}

}  // namespace tarry
