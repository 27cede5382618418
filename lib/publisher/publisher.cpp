// The publisher (see tarry/publisher/publisher.hpp): schedule headers on the
// way out, a lazily (re)opened confirm channel, returns matched to publishes.
#include "tarry/publisher/publisher.hpp"

#include "tarry/contract/schedule_headers.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <cstdio>
#include <deque>
#include <functional>
#include <random>

namespace tarry {

namespace asio = boost::asio;

wall_time job_schedule::due(wall_time now) const noexcept {
    switch (kind_) {
        case kind::now: return now;
        case kind::at: return at_;
        case kind::after: return now + std::chrono::duration_cast<wall_time::duration>(after_);
    }
    return now;
}

namespace {

// What a basic.return is matched by.
std::size_t fingerprint(std::string_view exchange, std::string_view routing_key,
                        const amqp::message& m) {
    const std::hash<std::string_view> h;
    std::size_t f = h(exchange);
    const auto mix = [&f](std::size_t v) { f ^= v + 0x9e3779b97f4a7c15ULL + (f << 6) + (f >> 2); };
    mix(h(routing_key));
    mix(h(m.properties.message_id ? std::string_view(*m.properties.message_id) : std::string_view()));
    mix(h(m.body_view()));
    return f;
}

// 128 random bits as 32 hex digits.
std::string random_id() {
    thread_local std::mt19937_64 rng(std::random_device{}());
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(rng()),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

}  // namespace

struct publisher::state : std::enable_shared_from_this<publisher::state> {
    state(amqp::connection& c, publisher_options o)
        : conn(c), options(o), strand(asio::make_strand(c.get_executor())) {}

    struct outgoing {
        std::string exchange, routing_key;
        amqp::message msg;
        handler done;
    };
    struct flight {
        std::uint64_t id;
        std::size_t fingerprint;
        bool returned = false;
    };

    amqp::connection& conn;
    const publisher_options options;
    asio::strand<asio::any_io_executor> strand;

    // On the strand only.
    amqp::channel channel;
    bool opening = false;
    std::deque<outgoing> waiting;
    std::deque<flight> flights;
    std::uint64_t next_id = 0;

    std::atomic<std::uint64_t> published{0}, confirmed{0}, returned{0}, failed{0};

    void complete(handler h, std::error_code ec) {
        if (!ec) ++confirmed;
        else if (ec == publish_errc::unroutable) ++returned;
        else ++failed;
        auto ex = asio::get_associated_executor(h, strand);
        asio::dispatch(ex, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
    }

    void enqueue(outgoing o) {
        if (!opening && channel.is_open()) {
            send(std::move(o));
            return;
        }
        waiting.push_back(std::move(o));
        if (!opening) open();
    }

    void open() {
        opening = true;
        channel = {};
        conn.async_open_channel(asio::bind_executor(
            strand, [self = shared_from_this()](std::error_code ec, amqp::channel ch) {
                if (ec) return self->opened(ec);
                ch.set_return_handler([w = self->weak_from_this()](amqp::returned_message r) {
                    if (auto s = w.lock()) {
                        asio::post(s->strand, [s, r = std::move(r)] { s->on_return(r); });
                    }
                });
                ch.async_confirm_select(asio::bind_executor(
                    self->strand, [self, ch](std::error_code ec2) {
                        if (!ec2) self->channel = ch;
                        self->opened(ec2);
                    }));
            }));
    }

    void opened(std::error_code ec) {
        opening = false;
        auto ready = std::move(waiting);
        waiting.clear();
        for (auto& o : ready) {
            if (ec) complete(std::move(o.done), ec);
            else send(std::move(o));
        }
    }

    void send(outgoing o) {
        const std::uint64_t id = ++next_id;
        flights.push_back({id, fingerprint(o.exchange, o.routing_key, o.msg)});
        ++published;
        amqp::publish_options po;
        po.mandatory = options.mandatory;
        channel.async_publish(
            o.exchange, o.routing_key, o.msg, po,
            asio::bind_executor(strand, [self = shared_from_this(), id,
                                         done = std::move(o.done)](std::error_code ec) mutable {
                if (self->land(id) && !ec) ec = publish_errc::unroutable;
                self->complete(std::move(done), ec);
            }));
    }

    // Forgets flight `id`; true if a return was matched to it.
    bool land(std::uint64_t id) {
        for (auto it = flights.begin(); it != flights.end(); ++it) {
            if (it->id != id) continue;
            const bool was_returned = it->returned;
            flights.erase(it);
            return was_returned;
        }
        return false;
    }

    void on_return(const amqp::returned_message& r) {
        const auto f = fingerprint(r.exchange, r.routing_key, r.msg);
        for (auto& fl : flights) {
            if (fl.fingerprint == f && !fl.returned) {
                fl.returned = true;
                return;
            }
        }
    }
};

publisher::publisher(amqp::connection& conn, publisher_options options)
    : s_(std::make_shared<state>(conn, options)) {}

publisher::~publisher() = default;

void publisher::publish_(std::string exchange, std::string routing_key, amqp::message msg,
                         const job_schedule* when, handler h) {
    if (when != nullptr) {
        const wall_time now = std::chrono::system_clock::now();
        const wall_time due = when->due(now);
        std::error_code refused;
        // (wall_time counts nanoseconds in 64 bits: it cannot pass the year 2262.)
        if (due.time_since_epoch().count() < 0) {
            refused = publish_errc::invalid_schedule;
        } else if (s_->options.max_delay && due - now > *s_->options.max_delay) {
            refused = publish_errc::delay_exceeds_max;
        }
        if (refused) {
            asio::post(s_->strand, [s = s_, h = std::move(h), refused]() mutable {
                s->complete(std::move(h), refused);
            });
            return;
        }
        contract::write_schedule(msg.properties, due, now);
        if (!msg.properties.message_id) msg.properties.message_id = random_id();
        if (s_->options.persistent && !msg.properties.delivery_mode) msg.properties.delivery_mode = 2;
    }
    asio::post(s_->strand, [s = s_, o = state::outgoing{std::move(exchange), std::move(routing_key),
                                                         std::move(msg), std::move(h)}]() mutable {
        s->enqueue(std::move(o));
    });
}

publisher_stats publisher::stats() const {
    return {s_->published.load(), s_->confirmed.load(), s_->returned.load(), s_->failed.load()};
}

}  // namespace tarry
