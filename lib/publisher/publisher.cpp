// The publisher's front (see tarry/publisher/publisher.hpp): due times,
// refusals, the headers written on the caller's thread, and the hand-off to
// the strand that owns the channel.
#include "tarry/publisher/publisher.hpp"

#include "publisher_state.hpp"

#include "tarry/contract/schedule_headers.hpp"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdio>
#include <random>

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

namespace {

// 128 random bits as 32 hex digits.
std::string random_id() {
    thread_local std::mt19937_64 rng(std::random_device{}());
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

// Why a schedule due at `due`, published at `now`, is refused (an empty
// code when it is not). A delay above max_delay is that, even when it also
// passes the end of the clock. The last second before the end of wall_time
// is refused too: a double written there may not read back inside it.
amqp::diagnostics refusal(const job_schedule& when, wall_time due, wall_time now,
                          const publisher_options& o) {
    using std::chrono::milliseconds;
    if (!when.valid()) return {publish_errc::invalid_schedule, "the delay is not a number", std::nullopt};
    // (due - now) > max_delay ⇔ ceil(due - now) > max_delay, for whole
    // milliseconds; compared in milliseconds so that no bound overflows.
    if (o.max_delay && due > now && std::chrono::ceil<milliseconds>(due - now) > *o.max_delay) {
        const auto ms = [](auto d) {
            return std::to_string(std::chrono::ceil<milliseconds>(d).count()) + " ms";
        };
        return {publish_errc::delay_exceeds_max,
                "the job is due in " + ms(due - now) + ", above max_delay (" + ms(*o.max_delay) + ")",
                std::nullopt};
    }
    if (due < wall_time{} || due > wall_time::max() - std::chrono::seconds(1)) {
        const auto from_epoch = std::chrono::duration_cast<milliseconds>(due.time_since_epoch()).count();
        return {publish_errc::invalid_schedule,
                "the due time, " + std::to_string(from_epoch) + " ms from the epoch, is " +
                    (due < wall_time{} ? "before 1970" : "past the range of the clock"),
                std::nullopt};
    }
    return {};
}

}  // namespace

publisher::publisher(amqp::connection& conn, publisher_options options)
    : s_(std::make_shared<state>(conn, options)) {}

publisher::~publisher() { s_->detach(); }

void publisher::publish_(std::string exchange, std::string routing_key, amqp::message msg,
                         const job_schedule* when, completion h) {
    if (when != nullptr) {
        const wall_time now = std::chrono::system_clock::now();
        const wall_time due = when->due(now);
        if (auto refused = refusal(*when, due, now, s_->options); refused.code) {
            asio::post(s_->strand, [s = s_, h = std::move(h), why = std::move(refused)]() mutable {
                s->complete(std::move(h), std::move(why));
            });
            return;
        }
        contract::write_schedule(msg.properties, due, now);
        if (!msg.properties.message_id) msg.properties.message_id = random_id();
        if (s_->options.persistent && !msg.properties.delivery_mode) msg.properties.delivery_mode = 2;
    }
    s_->ensure_channel();  // from here, while the connection is certainly alive
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
