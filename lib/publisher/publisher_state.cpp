// The publisher's confirm channel (see publisher_state.hpp): opened lazily
// with confirm.select, one at a time, reopened after it closes; publishes
// kept in order while it opens; returns matched to publishes; closed once a
// destroyed publisher has nothing pending.
#include "publisher_state.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

namespace tarry {

namespace asio = boost::asio;

publisher::state::state(amqp::connection& c, publisher_options o)
    : options(std::move(o)), strand(asio::make_strand(c.get_executor())), conn_(&c) {}

void publisher::state::complete(handler h, std::error_code ec) {
    if (!ec) ++confirmed;
    else if (ec == publish_errc::unroutable) ++returned;
    else if (ec == amqp::errc::publish_nacked) ++nacked;
    else ++failed;
    auto ex = asio::get_associated_executor(h, strand);
    asio::dispatch(ex, [h = std::move(h), ec]() mutable { std::move(h)(ec); });
}

void publisher::state::note(amqp::diagnostics why) {
    std::lock_guard lock(error_mutex_);
    last_error_ = std::move(why);
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
    const std::error_code gone = amqp::errc::channel_closed;
    note({gone, "the publisher's channel closed after the publisher was destroyed", std::nullopt});
    opened(0, gone, {});
}

void publisher::state::open_locked() {
    opening_ = true;
    const std::uint64_t number = ++channels_opened_;
    conn_->async_open_channel(asio::bind_executor(strand, [self = shared_from_this(), number](
                                                              std::error_code ec, amqp::channel ch) {
        if (ec) return self->opened(number, ec, ch);
        ch.set_return_handler([w = self->weak_from_this(), number](amqp::returned_message r) {
            if (auto s = w.lock()) {
                asio::post(s->strand, [s, number, r = std::move(r)] { s->on_return(number, r); });
            }
        });
        ch.async_confirm_select(asio::bind_executor(self->strand, [self, number, ch](std::error_code ec2) {
            self->opened(number, ec2, ch);
        }));
    }));
}

void publisher::state::opened(std::uint64_t number, std::error_code ec, const amqp::channel& ch) {
    if (ec && number != 0) {
        auto why = ch.last_error();
        if (why.code != ec) why = {ec, ec.message(), std::nullopt};
        why.message = "cannot open the publisher's channel: " + why.message;
        note(std::move(why));
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
        if (ec) complete(std::move(o.done), ec);
        else send(std::move(o));
    }
    close_if_done();
}

void publisher::state::send(outgoing o) {
    const std::uint64_t id = flights_.add(channel_number_, o.exchange, o.routing_key, o.msg);
    ++published;
    amqp::publish_options po;
    po.mandatory = options.mandatory;
    auto on_confirm = [self = shared_from_this(), ch = channel_, id, done = std::move(o.done)](
                          std::error_code ec) mutable {
        // A publish's return was posted to this strand before its ack.
        if (self->flights_.land(id) && !ec) ec = publish_errc::unroutable;
        if (ec && ec != publish_errc::unroutable) {
            auto why = ch.last_error();
            if (why.code != ec) why = {ec, ec.message(), std::nullopt};
            self->note(std::move(why));
        }
        self->complete(std::move(done), ec);
        self->close_if_done();
    };
    channel_.async_publish(o.exchange, o.routing_key, o.msg, po,
                           asio::bind_executor(strand, std::move(on_confirm)));
}

void publisher::state::on_return(std::uint64_t number, const amqp::returned_message& r) {
    if (!flights_.match_return(number, r.exchange, r.routing_key, r.msg)) return;
    note({publish_errc::unroutable,
          "no queue took the message published to exchange '" + r.exchange + "' with routing key '" +
              r.routing_key + "' (" + r.reply.to_string() + ")",
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
