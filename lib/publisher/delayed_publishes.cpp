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
    cascade_ptr known = cascade_;
    if (!known && options.delay_cascade) {
        try {
            known = std::make_shared<const parking::delay_cascade>(*options.delay_cascade);
        } catch (const std::invalid_argument&) {
            lock.unlock();
            auto why = parking::check(*options.delay_cascade);
            asio::post(strand, [then = std::move(then), why = std::move(why)]() mutable {
                std::move(then)(std::move(why), nullptr);
            });
            return;
        }
    }
    auto diag = std::make_shared<amqp::diagnostics>();
    const asio::any_io_executor ex = strand;
    // Once the cascade is known: its delivery queue for `destination`,
    // then the channel is closed and both are remembered.
    auto declare_delivery = [self = shared_from_this(), ex, diag, destination, word](
                                amqp::channel ch, cascade_ptr cascade, cascade_handler then) mutable {
        auto delivery = cascade->delivery(destination);
        parking::async_declare(
            ex, ch, std::move(delivery), *diag,
            asio::bind_executor(self->strand, [self, ch, cascade, diag, word,
                                               then = std::move(then)](std::error_code ec) mutable {
                ch.async_close([](std::error_code) {});
                if (ec) {
                    diag->message = "the delay cascade's delivery queue: " + diag->message;
                    return std::move(then)(std::move(*diag), nullptr);
                }
                {
                    std::lock_guard relock(self->mutex_);
                    if (!self->cascade_) self->cascade_ = cascade;
                    self->delivery_queues_.insert(word);
                }
                std::move(then)(amqp::diagnostics{}, std::move(cascade));
            }));
    };
    conn_->async_open_channel(
        *diag, asio::bind_executor(strand, [self = shared_from_this(), ex, diag, known = std::move(known),
                                            declare_delivery = std::move(declare_delivery),
                                            then = std::move(then)](std::error_code ec, amqp::channel ch) mutable {
            if (ec) return std::move(then)(std::move(*diag), nullptr);
            if (known) return declare_delivery(ch, std::move(known), std::move(then));
            parking::async_read_description(
                ex, ch, self->options.delay_cascade_prefix, *diag,
                asio::bind_executor(self->strand, [ch, diag, declare_delivery = std::move(declare_delivery),
                                                   then = std::move(then)](std::error_code ec,
                                                                           parking::cascade_spec spec) mutable {
                    if (ec) {
                        ch.async_close([](std::error_code) {});
                        return std::move(then)(std::move(*diag), nullptr);
                    }
                    declare_delivery(ch, std::make_shared<const parking::delay_cascade>(std::move(spec)),
                                     std::move(then));
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
