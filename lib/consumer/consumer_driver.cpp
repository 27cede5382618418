// The driver: the core's inputs from Asio, and its actions executed.
#include "consumer_impl.hpp"
#include "consumer_topology.hpp"

#include "tarry/control/control_stream.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/parking/cascade_declaration.hpp"

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
    // Coroutines start from here: the jobs made due or held by this step.
    if (async_) async_->pump();
    copies_pending_.store(core_.copies_pending(), std::memory_order_relaxed);
    consuming_.store(core_.consuming(), std::memory_order_relaxed);
    arm_timer();
}

amqp::channel* consumer::impl::channel_of(std::size_t lane, std::uint32_t incarnation) {
    // A stale incarnation's ack or nack is never sent: the broker redelivers it.
    if (!core_.lanes().current(lane, incarnation) || !channels_[lane].is_open()) return nullptr;
    return &channels_[lane];
}

void consumer::impl::run(detail::core_action& a) {
    namespace act = detail::action;
    const auto ignore = [](std::error_code) {};
    std::visit(overloaded{
        [&](act::ack& x) {
            if (auto* ch = channel_of(x.lane, x.incarnation)) ch->async_ack(x.tag, {.multiple = x.multiple}, ignore);
        },
        [&](act::nack& x) {
            if (auto* ch = channel_of(x.lane, x.incarnation))
                ch->async_nack(x.tag, {.multiple = x.multiple, .requeue = true}, ignore);
        },
        [&](act::publish& x) {
            publisher_.async_publish_as_is(
                std::move(x.exchange), x.routing_key, std::move(x.message),
                asio::bind_executor(executor_, [w = weak_from_this(), id = x.publish_id](std::error_code ec) {
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
        [&](act::start_lane& x) {
            asio::co_spawn(executor_, [self = shared_from_this(), lane = x.lane] { return self->start_lane(lane); },
                           asio::detached);
        },
        [&](act::cancel_lane& x) {
            auto* ch = channel_of(x.lane, x.incarnation);
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
            spawn(&impl::subscribe);
        },
        [&](act::wake_workers&) {
            // Once for the deliveries of this read, after them (coroutines
            // start at the end of execute()).
            if (async_ || wake_posted_) return;
            wake_posted_ = true;
            asio::post(executor_, [self = shared_from_this()] {
                self->wake_posted_ = false;
                self->held_.wake_ready();
            });
        },
        [&](act::sweep&) {
            asio::post(executor_, [self = shared_from_this()] {
                self->core_.sweep(now());
                self->execute();
            });
        },
        [&](act::emit& x) {
            if (hooks_.on_event) hooks_.on_event(x.event);
        },
        [&](act::report& x) { tell(x.event); },
        [&](act::note_dead_letter& x) { dead_letters_.add(std::move(x.letter)); },
        [&](act::claim& x) { append_claim(x.entry); },
    }, a);
}

void consumer::impl::append_claim(const control::run_claim& claim) {
    // Best effort: the core makes the claim again while its occurrence
    // waits; a failure is only told. A confirmed claim must be read back:
    // the reader watches that it reads on.
    auto diag = std::make_shared<amqp::diagnostics>();
    claims_publisher_.async_publish_as_is(
        "", control::stream_name(options_.queue), control::to_entry(claim), *diag,
        asio::bind_executor(executor_, [w = weak_from_this(), diag](std::error_code ec) {
            auto s = w.lock();
            if (!s) return;
            if (!ec) {
                if (s->control_) s->control_->appended();
                return;
            }
            s->tell({connection_event::kind::control_failed, false, "cannot append a run claim: " + diag->message,
                     {}, 0});
        }));
}

void consumer::impl::arm_timer() {
    // Re-armed only for an earlier wake: a timer that fires early finds
    // nothing due and is armed again then, which costs less than moving it
    // at every confirm (each move completes the old wait as cancelled).
    const auto at = core_.next_wake();
    if (!at || (timer_at_ && *timer_at_ <= *at)) return;
    timer_at_ = at;
    timer_.expires_at(*at);
    timer_.async_wait([w = weak_from_this()](boost::system::error_code ec) {
        auto s = w.lock();
        if (!s || ec) return;
        s->timer_at_.reset();
        s->core_.tick(now());
        s->execute();
    });
}

void consumer::impl::note(const connection_event& e) {
    std::lock_guard lock(health_mutex_);
    health_.event(e);
}

void consumer::impl::tell(const connection_event& e) {
    note(e);
    if (hooks_.on_connection_event) hooks_.on_connection_event(e);
    if (hooks_.on_connection) hooks_.on_connection(e.text());
}

template <class F>
void consumer::impl::spawn(F member) {
    asio::co_spawn(executor_, [self = shared_from_this(), member] { return ((*self).*member)(); }, asio::detached);
}

namespace {
// What failed, for the consumer's start and its hooks: the operation's own
// diagnostics, with what the consumer was doing in front.
amqp::diagnostics failure(const std::string& what, amqp::diagnostics d) {
    d.message = what + ": " + d.message;
    return d;
}
}  // namespace

asio::awaitable<void> consumer::impl::connect() {
    // Copies first, so that they can be published once deliveries arrive;
    // the consuming connection's on_open then subscribes.
    for (auto* c : {&copies_conn_, &conn_}) {
        amqp::diagnostics diag;
        if (co_await c->async_connect(diag, use_awaitable)) {
            started(failure(c == &conn_ ? "cannot connect" : "cannot connect (copies)", diag));
            co_return;
        }
    }
}

void consumer::impl::started(const amqp::diagnostics& d) {
    if (!started_) return;
    auto done = std::move(started_);
    started_ = nullptr;
    done(d);
}

bool consumer::impl::start_fails_on(const amqp::diagnostics& d, std::uint64_t losses_then) const {
    return d.code && connection_losses_ == losses_then && conn_.is_open();
}

void consumer::impl::on_open(const amqp::connection_info& info) {
    // The broker's version decides the delivery limit when none is told.
    const auto* version = info.server_properties.find("version");
    const auto* text = version ? std::get_if<std::string>(&version->value) : nullptr;
    core_.broker_identified(text ? std::string_view(*text) : std::string_view());
    tell({connection_event::kind::connected, false, {}, {}, 0});
    if (core_.stopping() || subscribing_) return;
    subscribing_ = true;
    spawn(&impl::subscribe);
}

asio::awaitable<void> consumer::impl::subscribe() {
    const std::uint64_t losses = connection_losses_;
    amqp::diagnostics d = co_await declare_topology();
    // Cancels first: a job admitted before the stream is read up to its end
    // could run although a tombstone covers it.
    if (!d.code && control_) co_await control_->attach();
    if (!d.code && core_.stopping()) d = {make_error_code(amqp::errc::operation_cancelled), "stopping", {}};
    subscribing_ = false;
    if (!d.code) {
        core_.subscribed();
    } else if (started_ && start_fails_on(d, losses)) {
        started(d);
    } else {
        core_.subscribe_failed(d.message, now());
    }
    execute();
}

asio::awaitable<amqp::diagnostics> consumer::impl::declare_topology() {
    amqp::diagnostics diag;
    auto [ec, ch] = co_await conn_.async_open_channel(diag, use_awaitable);
    if (ec) co_return failure("declaring the queues", diag);
    auto queues = detail::consumer_topology(options_);
    amqp::diagnostics result;
    for (auto& q : queues) {
        const std::string name = q.name;
        auto [qe, info] = co_await ch.async_declare_queue(std::move(q), diag, use_awaitable);
        if (qe) {
            result = failure("declaring queue '" + name + "'", diag);
            break;
        }
    }
    if (auto cascade = detail::cascade_parking(options_); cascade && !result.code) {
        if (co_await parking::async_declare(conn_.get_executor(), ch, std::move(*cascade), diag, use_awaitable))
            result = failure("declaring the parking cascade", diag);
    }
    if (!result.code && options_.publish_events) {
        if (co_await ch.async_declare_exchange(detail::events_exchange(options_), diag, use_awaitable))
            result = failure("declaring the events exchange '" + options_.events_exchange + "'", diag);
    }
    if (ch.is_open()) co_await ch.async_close(use_awaitable);
    co_return result;
}

asio::awaitable<amqp::diagnostics> consumer::impl::open_lane(std::size_t i) {
    amqp::diagnostics diag;
    auto [oe, ch] = co_await conn_.async_open_channel(diag, use_awaitable);
    if (oe) co_return failure("opening lane " + std::to_string(i), diag);
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
    if (co_await ch.async_qos(qos, diag, use_awaitable)) co_return failure("opening lane " + std::to_string(i), diag);
    co_return amqp::diagnostics{};
}

asio::awaitable<void> consumer::impl::start_lane(std::size_t i) {
    const std::uint64_t losses = connection_losses_;
    amqp::diagnostics d;
    if (!core_.lanes().up(i) || !channels_[i].is_open()) d = co_await open_lane(i);
    const std::uint32_t gen = core_.lanes().incarnations()->get(i);
    if (!d.code) {
        auto co = detail::lane_consume_options(options_);
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
            // The broker's basic.cancel leaves the channel open, with its
            // jobs; a closed channel is reported by its close handler too.
            if (e == amqp::errc::consumer_cancelled)
                s->core_.consumer_cancelled(i, gen, "lane " + std::to_string(i) + ": " + e.message(), now());
            else
                s->core_.lane_lost(i, gen, "consumer ended: " + e.message(), now());
            s->execute();
        };
        auto ch = channels_[i];
        amqp::diagnostics diag;
        auto [ce, tag] = co_await ch.async_consume(co, std::move(handlers), diag, use_awaitable);
        if (ce) {
            d = failure("consuming on lane " + std::to_string(i), diag);
        } else {
            core_.lane_consuming(i, gen, tag);
        }
    }
    if (d.code) core_.lane_start_failed(i, gen, d.message, now());
    // The step first: it records that the lane consumes (health()), and
    // start() must not return before that.
    execute();
    if (!d.code || start_fails_on(d, losses)) started(d);
}

void consumer::impl::settle_finished() {
    for (auto& f : workers_context_->take_finished()) core_.finished(std::move(f), now());
    execute();
}

}  // namespace tarry
