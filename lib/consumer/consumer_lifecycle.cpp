// The consumer's life: start, subscribe (again after every reconnect or
// channel loss), channel loss, graceful stop.
#include "consumer_impl.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <stdexcept>

// GCC 12 reports Asio's coroutine frame deallocation as mismatched
// (-Wmismatched-new-delete, a known false positive for awaitable frames:
// Asio's frame operator new and delete do match).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace tarry {

namespace asio = boost::asio;

namespace {
amqp::connection_hooks connection_hooks_of(consumer::impl* self, const consumer_hooks& hooks,
                                           std::function<void()> on_open) {
    amqp::connection_hooks h;
    h.on_open = [on_open = std::move(on_open)](const amqp::connection_info&) { on_open(); };
    auto say = hooks.on_connection;
    auto tell = [say](const std::string& what) {
        if (!say) return;
        try {
            say(what);
        } catch (...) {
        }
    };
    h.on_lost = [tell](const amqp::diagnostics& d) { tell("lost: " + d.message); };
    h.on_reconnect_scheduled = [tell](unsigned attempt, std::chrono::milliseconds delay,
                                      const amqp::diagnostics&) {
        tell("reconnecting in " + std::to_string(delay.count()) + " ms (attempt " +
             std::to_string(attempt) + ")");
    };
    h.on_closed = [tell](const amqp::diagnostics& d) {
        tell(d.code ? "closed: " + d.message : std::string("closed"));
    };
    (void)self;
    return h;
}

std::string checked(subscription_options o, const job_handler& handler) {
    if (auto problem = validate(o)) throw std::invalid_argument("tarry consumer: " + *problem);
    if (!handler) throw std::invalid_argument("tarry consumer: the job handler is empty");
    return o.queue;
}
}  // namespace

consumer::impl::impl(amqp::connection_config config, subscription_options options,
                     job_handler handler, consumer_hooks hooks)
    : options_((checked(options, handler), std::move(options))),
      rules_{options_.default_delay, options_.max_delay},
      ladder_(options_.queue, options_.effective_min_park_ttl(), options_.hold_horizon),
      handler_(std::move(handler)),
      hooks_(std::move(hooks)),
      random_(retry::make_random_source(options_.retry_seed)),
      guard_(io_.get_executor()),
      conn_(io_.get_executor(), std::move(config),
            connection_hooks_of(this, hooks_, [this] { on_open(); })),
      publisher_(conn_) {}

consumer::impl::~impl() { stop(); }

void consumer::impl::start() {
    std::promise<std::string> first;
    auto outcome = first.get_future();
    asio::post(io_, [this, p = std::move(first)]() mutable { started_.emplace(std::move(p)); });
    io_thread_ = std::thread([this] { io_.run(); });
    workers_.emplace(held_, options_.workers, [this](due_item<job>& it) { run(it); },
                     [](due_item<job>&, std::exception_ptr) {});
    const auto connected = conn_.async_connect(asio::use_future).get();
    if (connected) {
        stop();
        throw std::runtime_error("tarry consumer: cannot connect: " + conn_.last_error().message);
    }
    // on_open subscribes and fulfils the promise.
    if (const std::string failure = outcome.get(); !failure.empty()) {
        stop();
        throw std::runtime_error("tarry consumer: cannot subscribe to '" + options_.queue +
                                 "': " + failure);
    }
}

void consumer::impl::on_open() {
    if (hooks_.on_connection) {
        try {
            hooks_.on_connection("connected");
        } catch (...) {
        }
    }
    if (stopping_ || subscribing_) return;
    subscribing_ = true;
    asio::co_spawn(io_, subscribe(), asio::detached);
}

asio::awaitable<void> consumer::impl::subscribe() {
    using asio::use_awaitable;
    std::string failure;
    auto [ec, ch] = co_await conn_.async_open_channel(use_awaitable);
    const auto fail = [&](const std::string& what, const amqp::diagnostics& d) {
        failure = what + ": " + d.message;
    };
    if (ec) {
        fail("opening a channel", conn_.last_error());
    } else {
        amqp::queue_options work;
        work.name = options_.queue;
        work.durable = true;
        work.passive = !options_.declare_queue;
        std::vector<amqp::queue_options> queues{work};
        if (options_.dead_letter_exchange.empty()) {
            amqp::queue_options dead;
            dead.name = options_.dead_letter_queue_name();
            dead.durable = true;
            queues.push_back(dead);
        }
        for (const auto& w : ladder_.queues()) {
            amqp::queue_options o;
            o.name = w.name;
            o.durable = true;
            o.arguments = w.arguments;
            queues.push_back(std::move(o));
        }
        for (auto& q : queues) {
            const std::string name = q.name;
            auto [qe, info] = co_await ch.async_declare_queue(std::move(q), use_awaitable);
            if (qe) {
                fail("declaring queue '" + name + "'", ch.last_error());
                break;
            }
        }
        if (failure.empty()) {
            amqp::qos_options qos;
            qos.prefetch_count = options_.effective_prefetch();
            if (auto qe = co_await ch.async_qos(qos, use_awaitable)) fail("basic.qos", ch.last_error());
        }
        if (failure.empty() && stopping_) failure = "stopping";
        if (failure.empty()) {
            // A new incarnation: whatever is still held from the last one goes.
            drop_generation(generation_.load(), "resubscribed on a new channel");
            const std::uint64_t gen = ++last_generation_;
            generation_.store(gen, std::memory_order_release);
            ch.set_close_handler([w = weak_from_this(), gen](const amqp::diagnostics& d) {
                if (auto s = w.lock()) s->on_channel_lost(gen, "channel closed: " + d.message);
            });
            amqp::consume_options co;
            co.queue = options_.queue;
            amqp::consumer_handlers handlers;
            handlers.on_delivery = [w = weak_from_this(), gen](amqp::delivery d) {
                if (auto s = w.lock()) s->admit(gen, std::move(d));
            };
            handlers.on_cancelled = [w = weak_from_this(), gen](std::error_code e) {
                if (auto s = w.lock()) s->on_channel_lost(gen, "consumer cancelled: " + e.message());
            };
            channel_ = ch;
            auto [ce, tag] = co_await ch.async_consume(co, std::move(handlers), use_awaitable);
            if (ce) {
                fail("basic.consume", ch.last_error());
            } else {
                consumer_tag_ = tag;
            }
        }
        if (!failure.empty() && ch.is_open()) co_await ch.async_close(use_awaitable);
    }
    subscribing_ = false;
    if (started_) {
        started_->set_value(failure);
        started_.reset();
        co_return;
    }
    if (!failure.empty() && !stopping_) {
        if (hooks_.on_connection) {
            try {
                hooks_.on_connection("subscribe failed, retrying in 1 s: " + failure);
            } catch (...) {
            }
        }
        resubscribe_later(std::chrono::seconds(1));
    }
}

bool consumer::impl::drop_generation(std::uint64_t gen, const std::string& why) {
    std::uint64_t expected = gen;
    // Only the current incarnation's loss counts (a close and a cancel may both report it).
    if (gen == 0 || !generation_.compare_exchange_strong(expected, 0, std::memory_order_acq_rel))
        return false;
    for (auto& it : held_.remove(gen, &job::generation)) {
        ++counters_.dropped;
        auto e = event_of(it.value, job_event::kind::dropped);
        e.reason = why;
        emit(std::move(e));
    }
    return true;
}

void consumer::impl::on_channel_lost(std::uint64_t gen, const std::string& why) {
    if (!drop_generation(gen, why)) return;
    ++counters_.channel_losses;
    channel_ = {};
    consumer_tag_.clear();
    if (!stopping_) resubscribe_later(std::chrono::milliseconds(200));
}

void consumer::impl::resubscribe_later(std::chrono::milliseconds delay) {
    auto timer = std::make_shared<asio::steady_timer>(io_, delay);
    timer->async_wait([w = weak_from_this(), timer](boost::system::error_code) {
        auto s = w.lock();
        if (!s || s->stopping_ || s->subscribing_ || s->channel_.is_open()) return;
        // A lost connection resubscribes from on_open once it is back.
        if (!s->conn_.is_open()) return;
        s->subscribing_ = true;
        asio::co_spawn(s->io_, s->subscribe(), asio::detached);
    });
}

void consumer::impl::requeue_all(std::vector<due_item<job>> items) {
    for (auto& it : items) {
        nack_requeue(it.value);
        emit(event_of(it.value, job_event::kind::requeued));
    }
}

void consumer::impl::stop() {
    if (stopped_.exchange(true)) return;
    if (!io_thread_.joinable()) return;  // never started
    // 1. No new deliveries.
    std::promise<void> cancelled;
    auto cancel_done = cancelled.get_future();
    asio::post(io_, [this, &cancelled] {
        stopping_ = true;
        if (!channel_.is_open() || consumer_tag_.empty()) {
            cancelled.set_value();
            return;
        }
        channel_.async_cancel(consumer_tag_, [&cancelled](std::error_code) { cancelled.set_value(); });
    });
    cancel_done.wait_for(std::chrono::seconds(10));
    // 2. Running jobs finish within the grace period; the rest goes back.
    std::vector<due_item<job>> back;
    if (workers_) back = workers_->stop(options_.shutdown_grace).not_started;
    for (auto& it : held_.drain()) back.push_back(std::move(it));
    std::promise<void> requeued;
    auto requeue_done = requeued.get_future();
    asio::post(io_, [this, &requeued, b = std::move(back)]() mutable {
        requeue_all(std::move(b));
        requeued.set_value();
    });
    requeue_done.wait();
    // 3. Copies in flight: wait for their confirms (and the acks they release).
    const auto deadline = std::chrono::steady_clock::now() + options_.shutdown_grace;
    while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    // 4. Close (queued behind the acks and nacks above), then end the I/O thread.
    conn_.async_close(asio::use_future).wait_for(std::chrono::seconds(10));
    guard_.reset();
    io_.stop();
    io_thread_.join();
    workers_.reset();
}

consumer_stats consumer::impl::stats() const {
    consumer_stats s;
    const auto& c = counters_;
    s.received = c.received;
    s.fast_path = c.fast_path;
    s.started = c.started;
    s.succeeded = c.succeeded;
    s.failed = c.failed;
    s.retried = c.retried;
    s.dead_lettered = c.dead_lettered;
    s.parked = c.parked;
    s.requeued = c.requeued;
    s.dropped = c.dropped;
    s.republish_failures = c.republish_failures;
    s.channel_losses = c.channel_losses;
    s.held = held_.size();
    s.held_bytes = held_.bytes();
    s.running = workers_ ? workers_->stats().running : 0;
    return s;
}

}  // namespace tarry
