#include "event_publisher.hpp"

#include "tarry/consumer/job_event_json.hpp"

#include <algorithm>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace tarry::detail {

namespace asio = boost::asio;

amqp::message event_message(const job_event& e, std::string_view queue) {
    amqp::basic_properties p;
    p.content_type = "application/json";
    p.delivery_mode = 1;
    p.timestamp = epoch_whole_seconds(e.at);
    return amqp::message(to_json(e, queue), std::move(p));
}

std::string event_routing_key(const job_event& e, std::string_view queue) {
    std::string key = to_string(e.what);
    key += '.';
    key += queue;
    return key;
}

std::vector<outgoing_event> event_messages(const std::vector<job_event>& events, std::string_view queue,
                                           std::size_t per_message) {
    std::vector<outgoing_event> out;
    if (per_message <= 1) {
        out.reserve(events.size());
        for (const auto& e : events) out.push_back({event_routing_key(e, queue), event_message(e, queue)});
        return out;
    }
    // Kinds in the order of their first event; a kind's events in order.
    std::vector<std::vector<const job_event*>> by_kind;
    for (const auto& e : events) {
        auto it = std::find_if(by_kind.begin(), by_kind.end(), [&](const auto& g) { return g.front()->what == e.what; });
        if (it == by_kind.end()) by_kind.push_back({&e});
        else it->push_back(&e);
    }
    for (const auto& group : by_kind) {
        for (std::size_t from = 0; from < group.size(); from += per_message) {
            const std::size_t to = std::min(group.size(), from + per_message);
            auto m = event_message(*group[from], queue);  // the first one's properties
            std::string body = "[";
            for (std::size_t i = from; i < to; ++i) {
                if (i > from) body += ',';
                body += to_json(*group[i], queue);
            }
            body += ']';
            m.body.assign(body.begin(), body.end());
            out.push_back({event_routing_key(*group[from], queue), std::move(m), to - from});
        }
    }
    return out;
}

event_publisher::event_publisher(amqp::connection& copies, asio::any_io_executor io,
                                 std::shared_ptr<event_outbox> outbox, std::string exchange, std::string queue,
                                 std::size_t per_message)
    : copies_(copies),
      io_(std::move(io)),
      outbox_(std::move(outbox)),
      exchange_(std::move(exchange)),
      queue_(std::move(queue)),
      per_message_(per_message) {}

event_publisher::~event_publisher() { stop(); }

void event_publisher::start() {
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void event_publisher::stop() {
    {
        std::lock_guard lock(channel_mutex_);
        stopped_ = true;
    }
    outbox_->close();
    if (thread_.joinable()) thread_.join();
}

void event_publisher::run() {
    for (;;) {
        // Several events a message: the events of a few milliseconds gather.
        const auto batch = outbox_->take(per_message_ > 1 ? gather_for : std::chrono::milliseconds{});
        if (batch.empty()) return;  // closed and drained
        amqp::channel ch;
        {
            std::lock_guard lock(channel_mutex_);
            ch = channel_;
        }
        // Checked once a batch: what the broker blocks would only pile up
        // in the connection's output.
        if (!ch.is_open() || copies_.blocked()) {
            outbox_->settled(batch.size(), false);
            continue;
        }
        // Encoded here; handed to the I/O executor in one post per batch:
        // a post per event from this thread would wake the I/O thread for
        // each one.
        // The events of a message are settled together, as it is written.
        auto ready = std::make_shared<std::vector<outgoing_event>>(event_messages(batch, queue_, per_message_));
        asio::post(io_, [self = shared_from_this(), ch, ready] {
            for (const auto& o : *ready) {
                ch.async_publish(self->exchange_, o.routing_key, o.msg, {},
                                 [outbox = self->outbox_, n = o.events](std::error_code ec) { outbox->settled(n, !ec); });
            }
        });
    }
}

void event_publisher::connection_open() {
    {
        std::lock_guard lock(channel_mutex_);
        if (stopped_ || channel_.is_open()) return;
    }
    open_channel();
}

void event_publisher::open_channel() {
    if (opening_.exchange(true)) return;
    copies_.async_open_channel([w = weak_from_this()](std::error_code ec, amqp::channel ch) {
        auto self = w.lock();
        if (!self) return;
        self->opening_ = false;
        if (ec) {
            self->reopen_later();
            return;
        }
        ch.set_close_handler([w](const amqp::diagnostics&) {
            if (auto s = w.lock()) s->reopen_later();
        });
        std::lock_guard lock(self->channel_mutex_);
        if (self->stopped_) {
            ch.async_close([](std::error_code) {});
            return;
        }
        self->channel_ = std::move(ch);
    });
}

void event_publisher::reopen_later() {
    // After a connection loss the connection's reopening calls
    // connection_open(); a channel the broker closed is opened again here.
    auto timer = std::make_shared<asio::steady_timer>(io_, reopen_after);
    timer->async_wait([timer, w = weak_from_this()](boost::system::error_code ec) {
        auto self = w.lock();
        if (!self || ec || !self->copies_.is_open()) return;
        {
            std::lock_guard lock(self->channel_mutex_);
            if (self->stopped_ || self->channel_.is_open()) return;
        }
        self->open_channel();
    });
}

}  // namespace tarry::detail
