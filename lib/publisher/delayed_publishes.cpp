// async_publish_delayed (see tarry/publisher/publisher.hpp): a message
// delivered to any exchange after a delay, through the broker-side delay
// cascade; the cascade's spec and each destination's delivery queue are
// settled once per publisher, on a channel of their own. Jobs the publisher
// parks (publisher_options::park_beyond) take the same way.
#include "tarry/publisher/publisher.hpp"

#include "publisher_state.hpp"

#include "tarry/parking/cascade_declaration.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <memory>

namespace tarry {

namespace asio = boost::asio;

void publisher::state::with_delay_destination(parking::cascade_destination destination, cascade_handler then) {
    using cascade_ptr = std::shared_ptr<const parking::delay_cascade>;
    std::unique_lock lock(mutex_);
    const std::string word = parking::delay_cascade::destination_word(destination);
    if (conn_ == nullptr || (cascade_ && delivery_queues_.contains(word))) {
        amqp::diagnostics why;
        if (conn_ == nullptr) why = amqp::diagnostics::from(amqp::errc::channel_closed, "the publisher is gone");
        asio::post(strand, [then = std::move(then), why = std::move(why), c = cascade_]() mutable {
            std::move(then)(std::move(why), std::move(c));
        });
        return;
    }
    // Being declared for an earlier publish: wait with it.
    if (auto waiting = delivery_waiting_.find(word); waiting != delivery_waiting_.end()) {
        waiting->second.push_back(std::move(then));
        return;
    }
    delivery_waiting_[word].push_back(std::move(then));
    // Everyone waiting for `word` learns the outcome (on the strand).
    auto finish = [self = shared_from_this(), word](amqp::diagnostics why, cascade_ptr cascade) {
        std::vector<cascade_handler> waiting;
        {
            std::lock_guard relock(self->mutex_);
            if (cascade && !why.code) {
                if (!self->cascade_) self->cascade_ = cascade;
                self->delivery_queues_.insert(word);
            }
            waiting = std::move(self->delivery_waiting_[word]);
            self->delivery_waiting_.erase(word);
        }
        for (auto& h : waiting) std::move(h)(why, cascade);
    };
    cascade_ptr known = cascade_;
    if (!known && options.delay_cascade) {
        if (auto why = parking::check(*options.delay_cascade); why.code) {
            lock.unlock();
            asio::post(strand, [finish, why = std::move(why)]() mutable { finish(std::move(why), nullptr); });
            return;
        }
        known = std::make_shared<const parking::delay_cascade>(*options.delay_cascade);
    }
    auto diag = std::make_shared<amqp::diagnostics>();
    const asio::any_io_executor ex = strand;
    // Once the cascade is known: its delivery queue for `destination`,
    // then the channel is closed.
    auto declare_delivery = [self = shared_from_this(), ex, diag, destination, finish](amqp::channel ch,
                                                                                   cascade_ptr cascade) {
        parking::async_declare(ex, ch, cascade->delivery(destination), *diag,
                               asio::bind_executor(self->strand, [ch, cascade, diag, finish](std::error_code ec) {
                                   ch.async_close([](std::error_code) {});
                                   if (ec) {
                                       diag->message = "the delay cascade's delivery queue: " + diag->message;
                                       return finish(std::move(*diag), nullptr);
                                   }
                                   finish({}, cascade);
                               }));
    };
    // First, that the destination exists (passively: a 404 closes only this
    // channel): what comes out of the cascade for a missing queue or
    // exchange would be dropped by the broker, where a direct mandatory
    // publish is returned. Then the delivery queue.
    auto check_destination = [self = shared_from_this(), diag, destination, finish,
                              declare_delivery](amqp::channel ch, cascade_ptr cascade) {
        auto checked = [ch, cascade, diag, destination, finish, declare_delivery](std::error_code ec) {
            if (!ec) return declare_delivery(ch, cascade);
            ch.async_close([](std::error_code) {});
            const std::string what = destination.exchange.empty()
                                         ? "queue '" + destination.routing_key + "'"
                                         : "exchange '" + destination.exchange + "'";
            finish(amqp::diagnostics::from(publish_errc::unroutable,
                                           "no " + what + " to deliver to (" + diag->message +
                                               "): what the delay cascade delivered to it would be dropped"),
                   nullptr);
        };
        if (destination.exchange.empty()) {
            amqp::queue_options q;
            q.name = destination.routing_key;
            q.passive = true;
            ch.async_declare_queue(std::move(q), *diag,
                                   asio::bind_executor(self->strand, [checked](std::error_code ec, amqp::queue_info) {
                                       checked(ec);
                                   }));
        } else {
            amqp::exchange_options x;
            x.name = destination.exchange;
            x.passive = true;
            ch.async_declare_exchange(std::move(x), *diag, asio::bind_executor(self->strand, checked));
        }
    };
    conn_->async_open_channel(
        *diag, asio::bind_executor(strand, [self = shared_from_this(), ex, diag, known = std::move(known),
                                            check_destination, finish](std::error_code ec, amqp::channel ch) {
            if (ec) return finish(std::move(*diag), nullptr);
            if (known) return check_destination(ch, known);
            parking::async_read_description(
                ex, ch, self->options.delay_cascade_prefix, *diag,
                asio::bind_executor(self->strand, [ch, diag, check_destination, finish](std::error_code ec,
                                                                                       parking::cascade_spec spec) {
                    if (ec) {
                        ch.async_close([](std::error_code) {});
                        return finish(std::move(*diag), nullptr);
                    }
                    check_destination(ch, std::make_shared<const parking::delay_cascade>(std::move(spec)));
                }));
        }));
}

void publisher::state::send_delayed(outgoing o, std::chrono::milliseconds delay, parking::unit_rounding rounding,
                                    bool cap) {
    if (o.msg.properties.headers) o.msg.properties.headers->erase("x-death");
    parking::cascade_destination destination{std::move(o.exchange), std::move(o.routing_key)};
    with_delay_destination(
        destination, [s = shared_from_this(), destination, msg = std::move(o.msg), delay, rounding, cap,
                      h = std::move(o.done)](amqp::diagnostics why,
                                             std::shared_ptr<const parking::delay_cascade> cascade) mutable {
            if (why.code) return s->complete(std::move(h), std::move(why));
            const auto wait = cap ? std::min(delay, cascade->max_delay()) : delay;
            const auto route = cascade->route(destination, wait, rounding);
            if (!route)
                return s->complete(std::move(h),
                                   amqp::diagnostics::from(publish_errc::delay_exceeds_max,
                                                           "a delay of " + std::to_string(delay.count()) +
                                                               " ms is above the delay cascade's longest, " +
                                                               std::to_string(cascade->max_delay().count()) + " ms"));
            if (route->units == 0)
                return s->enqueue({destination.exchange, destination.routing_key, std::move(msg), std::move(h)});
            s->enqueue({cascade->entry_exchange(), route->routing_key, std::move(msg), std::move(h)});
        });
}

void publisher::publish_delayed_(std::string exchange, std::string routing_key, amqp::message msg,
                                 std::chrono::milliseconds delay, completion h) {
    if (msg.properties.expiration)
        return s_->refuse(std::move(h), amqp::diagnostics::from(
                                            amqp::errc::invalid_argument,
                                            "a delayed message cannot have an expiration: it would cut its wait short"));
    if (s_->options.persistent && !msg.properties.delivery_mode) msg.properties.delivery_mode = 2;
    s_->ensure_channel();  // from here, while the connection is certainly alive
    state::outgoing o{std::move(exchange), std::move(routing_key), std::move(msg), std::move(h)};
    if (delay.count() <= 0) {
        if (o.msg.properties.headers) o.msg.properties.headers->erase("x-death");
        asio::post(s_->strand, [s = s_, o = std::move(o)]() mutable { s->enqueue(std::move(o)); });
        return;
    }
    s_->send_delayed(std::move(o), delay, parking::unit_rounding::up, false);
}

}  // namespace tarry
