// The publisher's confirm channel (see publisher_state.hpp): opened lazily
// with confirm.select, one at a time, reopened after it closes; publishes
// kept in order while it opens; returns matched to publishes; given up when
// a publish waits confirm_timeout; closed once a destroyed publisher has
// nothing pending.
#include "publisher_state.hpp"

#include "tarry/control/control_stream.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace tarry {

namespace asio = boost::asio;

publisher::state::state(amqp::connection& c, publisher_options o)
    : options(std::move(o)), strand(asio::make_strand(c.get_executor())), conn_(&c), confirm_deadline_(strand) {}

void publisher::state::complete(completion h, amqp::diagnostics why) {
    const std::error_code ec = why.code;
    if (!ec) ++confirmed;
    else if (ec == publish_errc::unroutable) ++returned;
    else if (ec == amqp::errc::publish_nacked) ++nacked;
    else ++failed;
    if (ec) note(why);
    std::move(h).complete(strand, std::move(why));
}

void publisher::state::refuse(completion h, amqp::diagnostics why) {
    asio::post(strand, [self = shared_from_this(), h = std::move(h), why = std::move(why)]() mutable {
        self->complete(std::move(h), std::move(why));
    });
}

namespace {
// How long the first command on a control stream this publisher declared
// waits before it writes (see with_control_stream).
constexpr std::chrono::milliseconds control_stream_settle{100};
}  // namespace

void publisher::state::with_control_stream(const std::string& queue, declared_handler then) {
    std::unique_lock lock(mutex_);
    if (conn_ == nullptr || control_streams_.contains(queue)) {
        lock.unlock();
        // Declared before; or the publisher is gone, and the publish that
        // follows fails as every publish does then.
        asio::post(strand, [then = std::move(then)]() mutable { std::move(then)(amqp::diagnostics{}); });
        return;
    }
    auto diag = std::make_unique<amqp::diagnostics>();
    amqp::diagnostics& why = *diag;
    control::async_declare_stream(
        *conn_, queue, false, why,
        asio::bind_executor(strand, [self = shared_from_this(), queue, then = std::move(then),
                                     diag = std::move(diag)](std::error_code ec) mutable {
            if (ec) {
                diag->message = "cannot declare the control stream '" + control::stream_name(queue) +
                                "': " + diag->message;
                return std::move(then)(std::move(*diag));
            }
            {
                std::lock_guard relock(self->mutex_);
                self->control_streams_.insert(queue);
            }
            // RabbitMQ 3.10 answers a declare of a stream that another
            // client is creating at the same moment before the stream's
            // writer has started; a publish in that gap crashes the channel
            // and closes the connection (541). The writer starts within
            // milliseconds: the first command after a declare waits a little.
            auto pause = std::make_shared<asio::steady_timer>(self->strand, control_stream_settle);
            pause->async_wait([pause, then = std::move(then)](boost::system::error_code) mutable {
                std::move(then)(amqp::diagnostics{});
            });
        }));
}

void publisher::state::read_control_stream(std::string queue, std::chrono::milliseconds timeout,
                                           control::entry_callback on_entry, completion h) {
    std::unique_lock lock(mutex_);
    if (conn_ == nullptr) {
        lock.unlock();
        return refuse(std::move(h), amqp::diagnostics::from(amqp::errc::channel_closed, "the publisher is gone"));
    }
    control::detail::read_stream(*conn_, std::move(queue), std::move(on_entry), timeout, std::move(h));
}

void publisher::state::forget_control_stream(const std::string& queue) {
    std::lock_guard lock(mutex_);
    control_streams_.erase(queue);
}

void publisher::state::note(const amqp::diagnostics& why) {
    std::lock_guard lock(error_mutex_);
    last_error_ = why;
}

amqp::diagnostics publisher::state::last_error() const {
    std::lock_guard lock(error_mutex_);
    return last_error_;
}

void publisher::state::detach() {
    {
        std::lock_guard lock(mutex_);
        conn_ = nullptr;
    }
    asio::post(strand, [self = shared_from_this()] {
        self->detached_ = true;
        self->close_if_done();
    });
}

void publisher::state::ensure_channel() {
    std::lock_guard lock(mutex_);
    if (conn_ != nullptr && !opening_ && !current_.is_open()) open_locked();
}

void publisher::state::enqueue(outgoing o) {
    if (channel_.is_open()) {  // then nothing waits: waiting_ is emptied when it is set
        send(std::move(o));
        return;
    }
    waiting_.push_back(std::move(o));
    std::unique_lock lock(mutex_);
    if (opening_) return;
    if (conn_ != nullptr) {
        open_locked();
        return;
    }
    lock.unlock();
    // The channel closed after the publisher was destroyed: no new one.
    opened(0,
           amqp::diagnostics::from(amqp::errc::channel_closed,
                                   "the publisher's channel closed after the publisher was destroyed"),
           {});
}

void publisher::state::open_locked() {
    opening_ = true;
    const std::uint64_t number = ++channels_opened_;
    // Where channel.open's and confirm.select's diagnostics go, kept by
    // their handlers until the last has run.
    auto diag = std::make_unique<amqp::diagnostics>();
    amqp::diagnostics& why = *diag;
    conn_->async_open_channel(
        why, asio::bind_executor(strand, [self = shared_from_this(), number, diag = std::move(diag)](
                                             std::error_code ec, amqp::channel ch) mutable {
            if (ec) return self->opened(number, std::move(*diag), ch);
            ch.set_return_handler([w = self->weak_from_this(), number](amqp::returned_message r) {
                if (auto s = w.lock()) {
                    asio::post(s->strand, [s, number, r = std::move(r)] { s->on_return(number, r); });
                }
            });
            amqp::diagnostics& select_why = *diag;
            ch.async_confirm_select(
                select_why, asio::bind_executor(self->strand, [self, number, ch, diag = std::move(diag)](
                                                                  std::error_code) mutable {
                    self->opened(number, std::move(*diag), ch);
                }));
        }));
}

void publisher::state::opened(std::uint64_t number, amqp::diagnostics why, const amqp::channel& ch) {
    const std::error_code ec = why.code;
    if (ec && number != 0) {
        why.message = "cannot open the publisher's channel: " + why.message;
        ch.async_close([ch](std::error_code) {});  // if confirm.select failed on an open channel
    }
    {
        std::lock_guard lock(mutex_);
        opening_ = false;
        if (!ec) current_ = ch;
    }
    if (!ec) {
        channel_ = ch;
        channel_number_ = number;
    }
    auto ready = std::move(waiting_);
    waiting_.clear();
    for (auto& o : ready) {
        if (ec) complete(std::move(o.done), why);
        else send(std::move(o));
    }
    close_if_done();
}

void publisher::state::send(outgoing o) {
    const std::uint64_t id = flights_.add(channel_number_, o.exchange, o.routing_key, o.msg, std::move(o.done),
                                          std::chrono::steady_clock::now());
    ++published;
    watch_confirms();
    amqp::publish_options po;
    po.mandatory = options.mandatory;
    auto diag = std::make_unique<amqp::diagnostics>();  // kept by the handler until it runs
    amqp::diagnostics& why = *diag;
    auto on_confirm = [self = shared_from_this(), id, diag = std::move(diag)](std::error_code) mutable {
        // A publish's return was posted to this strand before its ack.
        auto landed = self->flights_.land(id);
        if (!landed) return;  // given up on (confirm_timeout): completed then
        if (self->flights_.empty()) self->confirm_deadline_.cancel();  // nothing left to wait for
        if (landed->returned && !diag->code) *diag = std::move(*landed->returned);
        self->complete(std::move(landed->done), std::move(*diag));
        self->close_if_done();
    };
    channel_.async_publish(o.exchange, o.routing_key, o.msg, po, why,
                           asio::bind_executor(strand, std::move(on_confirm)));
}

void publisher::state::watch_confirms() {
    if (deadline_armed_ || !options.confirm_timeout || options.confirm_timeout->count() <= 0) return;
    const auto at = flights_.next_deadline(*options.confirm_timeout);
    if (!at) return;
    deadline_armed_ = true;
    confirm_deadline_.expires_at(*at);
    confirm_deadline_.async_wait([self = shared_from_this()](boost::system::error_code) {
        // Cancelled (all landed) or due: either way, what is overdue now.
        self->deadline_armed_ = false;
        self->confirms_overdue();
    });
}

void publisher::state::confirms_overdue() {
    const auto timeout = *options.confirm_timeout;
    while (const auto number = flights_.overdue_channel(std::chrono::steady_clock::now(), timeout)) {
        if (*number == channel_number_ && channel_.is_open()) {
            // The broker may confirm the rest of this channel's publishes
            // yet, but which it will cannot be told: all fail, and the
            // channel with them (their confirms, should they come, find
            // nothing).
            channel_.async_close([ch = channel_](std::error_code) {});
            channel_ = {};
            std::lock_guard lock(mutex_);
            current_ = {};
        }
        const auto why = amqp::diagnostics::from(
            publish_errc::confirm_timeout, "the broker did not confirm the publish within " +
                                               std::to_string(timeout.count()) +
                                               " ms (confirm_timeout); the message may still have been taken. "
                                               "Its channel was closed; the next publish opens another");
        for (auto& done : flights_.give_up(*number)) complete(std::move(*done), why);
    }
    watch_confirms();
    close_if_done();
}

void publisher::state::on_return(std::uint64_t number, const amqp::returned_message& r) {
    flights_.match_return(number, r.exchange, r.routing_key, r.msg,
                          {publish_errc::unroutable,
                           "no queue took the message published to exchange '" + r.exchange +
                               "' with routing key '" + r.routing_key + "' (" +
                               r.reply.to_string() + ")",
                           r.reply});
}

void publisher::state::close_if_done() {
    if (!detached_ || !waiting_.empty() || !flights_.empty() || !channel_.is_open()) return;
    {
        std::lock_guard lock(mutex_);
        if (opening_) return;
    }
    channel_.async_close([ch = channel_](std::error_code) {});
    channel_ = {};
}

}  // namespace tarry
