// The driver: the core's inputs from Asio, and its actions executed.
#include "consumer_impl.hpp"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

// GCC 12 reports Asio's coroutine frame deallocation as mismatched
// (-Wmismatched-new-delete, a known false positive for awaitable frames:
// Asio's frame operator new and delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace tarry {

namespace asio = boost::asio;
using asio::use_awaitable;

namespace {
template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;
}  // namespace

detail::moment consumer::impl::now() {
    return {std::chrono::steady_clock::now(), std::chrono::system_clock::now()};
}

void consumer::impl::execute() {
    if (executing_) return;  // the outer call runs what was added meanwhile
    executing_ = true;
    for (;;) {
        core_.take_actions(batch_);
        if (batch_.empty()) break;
        for (auto& a : batch_) run(a);
    }
    executing_ = false;
    copies_pending_.store(core_.copies_pending(), std::memory_order_relaxed);
    arm_timer();
}

amqp::channel* consumer::impl::channel_of(std::size_t lane, std::uint32_t generation) {
    // A stale incarnation's ack or nack is never sent: the broker redelivers it.
    if (!core_.lanes().current(lane, generation) || !channels_[lane].is_open()) return nullptr;
    return &channels_[lane];
}

void consumer::impl::run(detail::core_action& a) {
    namespace act = detail::action;
    const auto ignore = [](std::error_code) {};
    std::visit(overloaded{
        [&](act::ack& x) {
            if (auto* ch = channel_of(x.lane, x.generation)) ch->async_ack(x.tag, {.multiple = x.multiple}, ignore);
        },
        [&](act::nack& x) {
            if (auto* ch = channel_of(x.lane, x.generation))
                ch->async_nack(x.tag, {.multiple = x.multiple, .requeue = true}, ignore);
        },
        [&](act::publish& x) {
            publisher_.async_publish_as_is(
                std::move(x.exchange), x.routing_key, std::move(x.message),
                asio::bind_executor(io_, [w = weak_from_this(), id = x.publish_id](std::error_code ec) {
                    auto s = w.lock();
                    if (!s) return;
                    if (!ec) {
                        s->core_.copy_confirmed(id, now());
                    } else {
                        const auto info = s->copies_conn_.info();
                        s->core_.copy_refused(id, ec, info ? info->frame_max : 0, now());
                    }
                    s->execute();
                }));
        },
        [&](act::start_lane& x) { asio::co_spawn(io_, start_lane(x.lane), asio::detached); },
        [&](act::cancel_lane& x) {
            auto* ch = channel_of(x.lane, x.generation);
            if (!ch) return;
            ++cancels_pending_;
            ch->async_cancel(x.consumer_tag, [w = weak_from_this()](std::error_code) {
                if (auto s = w.lock()) --s->cancels_pending_;
            });
        },
        [&](act::close_lane& x) {
            auto& ch = channels_[x.lane];
            if (ch.is_open()) ch.async_close(ignore);  // e.g. a cancelled consumer's
            ch = {};
        },
        [&](act::subscribe&) {
            // A lost connection resubscribes from on_open once it is back.
            if (subscribing_ || !conn_.is_open()) return;
            subscribing_ = true;
            asio::co_spawn(io_, subscribe(), asio::detached);
        },
        [&](act::wake_workers&) {
            // Once for the deliveries of this read, after them.
            if (wake_posted_) return;
            wake_posted_ = true;
            asio::post(io_, [this] {
                wake_posted_ = false;
                held_.wake_ready();
            });
        },
        [&](act::sweep&) {
            asio::post(io_, [this] {
                core_.sweep(now());
                execute();
            });
        },
        [&](act::emit& x) {
            if (!hooks_.on_event) return;
            try {
                hooks_.on_event(x.event);
            } catch (...) {
            }
        },
        [&](act::report& x) {
            if (!hooks_.on_connection) return;
            try {
                hooks_.on_connection(x.text);
            } catch (...) {
            }
        },
    }, a);
}

void consumer::impl::arm_timer() {
    const auto at = core_.next_wake();
    if (at == timer_at_) return;
    timer_at_ = at;
    if (!at) {
        timer_.cancel();
        return;
    }
    timer_.expires_at(*at);
    timer_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto s = w.lock();
        if (!s || ec) return;
        s->timer_at_.reset();
        s->core_.tick(now());
        s->execute();
    });
}

void consumer::impl::on_open() {
    if (hooks_.on_connection) {
        try {
            hooks_.on_connection("connected");
        } catch (...) {
        }
    }
    if (core_.stopping() || subscribing_) return;
    subscribing_ = true;
    asio::co_spawn(io_, subscribe(), asio::detached);
}

asio::awaitable<void> consumer::impl::subscribe() {
    std::string failure = co_await declare_topology();
    if (failure.empty() && core_.stopping()) failure = "stopping";
    subscribing_ = false;
    if (failure.empty()) {
        core_.subscribed();
    } else if (!started_) {
        core_.subscribe_failed(failure, now());
    }
    if (started_ && !failure.empty()) {
        started_->set_value(failure);
        started_.reset();
    }
    execute();
}

asio::awaitable<std::string> consumer::impl::declare_topology() {
    auto [ec, ch] = co_await conn_.async_open_channel(use_awaitable);
    if (ec) co_return "opening a channel: " + conn_.last_error().message;
    std::vector<amqp::queue_options> queues(1);
    queues[0].name = options_.queue;
    queues[0].durable = true;
    queues[0].passive = !options_.declare_queue;
    if (options_.dead_letter_exchange.empty()) {
        amqp::queue_options dead;
        dead.name = options_.dead_letter_queue_name();
        dead.durable = true;
        queues.push_back(dead);
    }
    const parking::wait_ladder ladder(options_.queue, options_.effective_min_park_ttl(), options_.hold_horizon);
    for (const auto& w : ladder.queues()) {
        amqp::queue_options o;
        o.name = w.name;
        o.durable = true;
        o.arguments = w.arguments;
        queues.push_back(std::move(o));
    }
    std::string failure;
    for (auto& q : queues) {
        const std::string name = q.name;
        auto [qe, info] = co_await ch.async_declare_queue(std::move(q), use_awaitable);
        if (qe) {
            failure = "declaring queue '" + name + "': " + ch.last_error().message;
            break;
        }
    }
    if (ch.is_open()) co_await ch.async_close(use_awaitable);
    co_return failure;
}

asio::awaitable<std::string> consumer::impl::open_lane(std::size_t i) {
    auto [oe, ch] = co_await conn_.async_open_channel(use_awaitable);
    if (oe) co_return "opening a channel: " + conn_.last_error().message;
    const std::uint32_t gen = core_.lane_opened(i);
    channels_[i] = ch;
    ch.set_close_handler([w = weak_from_this(), i, gen](const amqp::diagnostics& d) {
        auto s = w.lock();
        if (!s) return;
        s->core_.lane_lost(i, gen, "channel closed: " + d.message, now());
        s->execute();
    });
    amqp::qos_options qos;
    qos.prefetch_count = options_.effective_prefetch();
    if (co_await ch.async_qos(qos, use_awaitable)) co_return "basic.qos: " + ch.last_error().message;
    co_return std::string();
}

asio::awaitable<void> consumer::impl::start_lane(std::size_t i) {
    std::string failure;
    if (!core_.lanes().up(i) || !channels_[i].is_open()) failure = co_await open_lane(i);
    const std::uint32_t gen = core_.lanes().generations()->get(i);
    if (failure.empty()) {
        amqp::consume_options co;
        co.queue = options_.queue;
        amqp::consumer_handlers handlers;
        handlers.on_delivery = [w = weak_from_this(), i, gen](amqp::delivery d) {
            auto s = w.lock();
            if (!s) return;
            s->core_.delivery(i, gen, std::move(d), now());
            s->execute();
        };
        handlers.on_cancelled = [w = weak_from_this(), i, gen](std::error_code e) {
            auto s = w.lock();
            if (!s) return;
            s->core_.lane_lost(i, gen, "consumer cancelled: " + e.message(), now());
            s->execute();
        };
        auto ch = channels_[i];
        auto [ce, tag] = co_await ch.async_consume(co, std::move(handlers), use_awaitable);
        if (ce) {
            failure = "basic.consume: " + ch.last_error().message;
        } else {
            core_.lane_consuming(i, gen, tag);
        }
    }
    if (!failure.empty()) core_.lane_start_failed(i, gen, failure, now());
    if (started_) {
        started_->set_value(failure);
        started_.reset();
    }
    execute();
}

void consumer::impl::settle_finished() {
    for (auto& f : workers_context_->take_finished()) core_.finished(std::move(f), now());
    execute();
}

}  // namespace tarry
