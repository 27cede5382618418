// async_publish_delayed (see tarry/publisher/publisher.hpp): a message
// delivered to any exchange after a delay, through the broker-side delay
// cascade; the cascade's spec and each destination's delivery queue are
// settled once per publisher, on a channel of their own.
#include "tarry/publisher/publisher.hpp"

#include "publisher_state.hpp"

#include "tarry/parking/cascade_declaration.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

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
    conn_->async_open_channel(
        *diag, asio::bind_executor(strand, [self = shared_from_this(), ex, diag, known = std::move(known),
                                            declare_delivery, finish](std::error_code ec, amqp::channel ch) {
            if (ec) return finish(std::move(*diag), nullptr);
            if (known) return declare_delivery(ch, known);
            parking::async_read_description(
                ex, ch, self->options.delay_cascade_prefix, *diag,
                asio::bind_executor(self->strand, [ch, diag, declare_delivery, finish](std::error_code ec,
                                                                                      parking::cascade_spec spec) {
                    if (ec) {
                        ch.async_close([](std::error_code) {});
                        return finish(std::move(*diag), nullptr);
                    }
                    declare_delivery(ch, std::make_shared<const parking::delay_cascade>(std::move(spec)));
                }));
        }));
}

void publisher::publish_delayed_(std::string exchange, std::string routing_key, amqp::message msg,
                                 std::chrono::milliseconds delay, completion h) {
    if (msg.properties.expiration)
        return s_->refuse(std::move(h), amqp::diagnostics::from(
                                            amqp::errc::invalid_argument,
                                            "a delayed message cannot have an expiration: it would cut its wait short"));
    // A copy that kept x-death would look like a dead-letter cycle to the
    // broker, which drops it silently.
    if (msg.properties.headers) msg.properties.headers->erase("x-death");
    if (s_->options.persistent && !msg.properties.delivery_mode) msg.properties.delivery_mode = 2;
    s_->ensure_channel();  // from here, while the connection is certainly alive
    if (delay.count() <= 0) {
        asio::post(s_->strand, [s = s_, o = state::outgoing{std::move(exchange), std::move(routing_key),
                                                             std::move(msg), std::move(h)}]() mutable {
            s->enqueue(std::move(o));
        });
        return;
    }
    parking::cascade_destination destination{std::move(exchange), std::move(routing_key)};
    s_->with_delay_destination(
        destination, [s = s_, destination, msg = std::move(msg), delay, h = std::move(h)](
                         amqp::diagnostics why, std::shared_ptr<const parking::delay_cascade> cascade) mutable {
            if (why.code) return s->complete(std::move(h), std::move(why));
            const auto route = cascade->route(destination, delay, parking::unit_rounding::up);
            if (!route)
                return s->complete(std::move(h),
                                   amqp::diagnostics::from(publish_errc::delay_exceeds_max,
                                                           "a delay of " + std::to_string(delay.count()) +
                                                               " ms is above the delay cascade's longest, " +
                                                               std::to_string(cascade->max_delay().count()) + " ms"));
            s->enqueue({cascade->entry_exchange(), route->routing_key, std::move(msg), std::move(h)});
        });
}

}  // namespace tarry
