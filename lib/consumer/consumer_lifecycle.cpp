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
// Reports `what` to the on_connection hook, if any; what it throws is dropped.
void tell(const std::function<void(const std::string&)>& say, const std::string& what) {
    if (!say) return;
    try {
        say(what);
    } catch (...) {
    }
}

// What a connection reports to the on_connection hook, each line prefixed
// with `who` ("" for the consuming connection, "copies connection " for the
// other); `on_open` (when set) runs after every (re)connect.
amqp::connection_hooks connection_hooks_of(const consumer_hooks& hooks, const std::string& who,
                                           std::function<void()> on_open) {
    amqp::connection_hooks h;
    if (on_open) h.on_open = [on_open = std::move(on_open)](const amqp::connection_info&) { on_open(); };
    auto tell = [say = hooks.on_connection, who](const std::string& what) { tarry::tell(say, who + what); };
    h.on_blocked = [tell](const std::string& reason) { tell("blocked by the broker: " + reason); };
    h.on_unblocked = [tell] { tell("unblocked"); };
    h.on_lost = [tell](const amqp::diagnostics& d) { tell("lost: " + d.message); };
    h.on_reconnect_scheduled = [tell](unsigned attempt, std::chrono::milliseconds delay,
                                      const amqp::diagnostics&) {
        tell("reconnecting in " + std::to_string(delay.count()) + " ms (attempt " +
             std::to_string(attempt) + ")");
    };
    h.on_closed = [tell](const amqp::diagnostics& d) {
        tell(d.code ? "closed: " + d.message : std::string("closed"));
    };
    return h;
}

// The copies connection's config: the consuming one's, its name marked.
amqp::connection_config copies_config_of(amqp::connection_config c) {
    if (!c.connection_name.empty()) c.connection_name += " (copies)";
    return c;
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
      conn_(io_.get_executor(), config, connection_hooks_of(hooks_, "", [this] { on_open(); })),
      copies_conn_(io_.get_executor(), copies_config_of(std::move(config)),
                   connection_hooks_of(hooks_, "copies connection ", nullptr)),
      publisher_(copies_conn_),
      lanes_(std::make_unique<detail::consume_lane[]>(options_.effective_channels())),
      lane_count_(options_.effective_channels()) {}

consumer::impl::~impl() { stop(); }

void consumer::impl::start() {
    std::promise<std::string> first;
    auto outcome = first.get_future();
    asio::post(io_, [this, p = std::move(first)]() mutable { started_.emplace(std::move(p)); });
    io_thread_ = std::thread([this] { io_.run(); });
    workers_.emplace(held_, options_.workers, [this](due_item<job>& it) { run(it); },
                     [](due_item<job>&, std::exception_ptr) {});
    // Copies first, so that they can be published once deliveries arrive.
    for (auto* c : {&copies_conn_, &conn_}) {
        if (c->async_connect(asio::use_future).get()) {
            const std::string why = c->last_error().message;
            stop();
            throw std::runtime_error("tarry consumer: cannot connect: " + why);
        }
    }
    // on_open subscribes and fulfils the promise.
    if (const std::string failure = outcome.get(); !failure.empty()) {
        stop();
        throw std::runtime_error("tarry consumer: cannot subscribe to '" + options_.queue +
                                 "': " + failure);
    }
}

void consumer::impl::on_open() {
    tell(hooks_.on_connection, "connected");
    if (stopping_ || subscribing_) return;
    subscribing_ = true;
    asio::co_spawn(io_, subscribe(), asio::detached);
}

asio::awaitable<void> consumer::impl::subscribe() {
    using asio::use_awaitable;
    std::string failure;
    // The topology first (idempotent), then a consuming lane.
    auto [ec, ch] = co_await conn_.async_open_channel(use_awaitable);
    if (ec) {
        failure = "opening a channel: " + conn_.last_error().message;
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
                failure = "declaring queue '" + name + "': " + ch.last_error().message;
                break;
            }
        }
        if (ch.is_open()) co_await ch.async_close(use_awaitable);
        if (failure.empty() && stopping_) failure = "stopping";
        if (failure.empty() && !intake_up()) failure = co_await start_lane(next_lane(no_lane));
    }
    subscribing_ = false;
    if (started_) {
        started_->set_value(failure);
        started_.reset();
        co_return;
    }
    if (!failure.empty() && !stopping_) {
        tell(hooks_.on_connection, "subscribe failed, retrying in 1 s: " + failure);
        resubscribe_later(std::chrono::seconds(1));
    }
}

asio::awaitable<std::string> consumer::impl::start_lane(std::size_t i) {
    using asio::use_awaitable;
    auto& lane = lanes_[i];
    if (lane.generation.load() == 0 || !lane.channel.is_open()) {
        // Down: a new incarnation on a new channel (whatever it still held goes).
        drop_generation(i, lane.generation.load(), "lane reopened on a new channel");
        auto [oe, ch] = co_await conn_.async_open_channel(use_awaitable);
        if (oe) co_return "opening a channel: " + conn_.last_error().message;
        if (++last_generation_ == 0) ++last_generation_;
        const std::uint32_t gen = last_generation_;
        lane.unsettled = 0;
        lane.holding = 0;
        lane.channel = ch;
        lane.generation.store(gen, std::memory_order_release);
        ch.set_close_handler([w = weak_from_this(), i, gen](const amqp::diagnostics& d) {
            if (auto s = w.lock()) s->on_channel_lost(i, gen, "channel closed: " + d.message);
        });
        amqp::qos_options qos;
        qos.prefetch_count = options_.effective_prefetch();
        if (auto qe = co_await ch.async_qos(qos, use_awaitable)) co_return "basic.qos: " + ch.last_error().message;
    }
    if (stopping_) co_return "stopping";
    const std::uint32_t gen = lane.generation.load();
    amqp::consume_options co;
    co.queue = options_.queue;
    amqp::consumer_handlers handlers;
    handlers.on_delivery = [w = weak_from_this(), i, gen](amqp::delivery d) {
        if (auto s = w.lock()) s->admit(i, gen, std::move(d));
    };
    handlers.on_cancelled = [w = weak_from_this(), i, gen](std::error_code e) {
        if (auto s = w.lock()) s->on_channel_lost(i, gen, "consumer cancelled: " + e.message());
    };
    auto ch = lane.channel;
    auto [ce, tag] = co_await ch.async_consume(co, std::move(handlers), use_awaitable);
    if (ce) co_return "basic.consume: " + ch.last_error().message;
    if (lane.generation.load() != gen) co_return "the channel was lost while subscribing";
    lane.consumer_tag = tag;
    intake_ = i;
    co_return std::string();
}

std::size_t consumer::impl::next_lane(std::size_t besides) const noexcept {
    std::size_t best = no_lane;
    const auto better = [&](std::size_t i) {
        if (best == no_lane) return true;
        const auto& a = lanes_[i];
        const auto& b = lanes_[best];
        const bool a_open = a.generation.load() != 0 && a.channel.is_open();
        const bool b_open = b.generation.load() != 0 && b.channel.is_open();
        const std::size_t a_load = a_open ? a.holding : 0, b_load = b_open ? b.holding : 0;
        if (a_load != b_load) return a_load < b_load;
        return a_open && !b_open;  // reuse an open channel before opening one
    };
    for (std::size_t i = 0; i < lane_count_; ++i)
        if (i != besides && better(i)) best = i;
    return best;
}

asio::awaitable<void> consumer::impl::rotate() {
    const std::size_t from = intake_;
    const std::size_t to = next_lane(from);
    // Nowhere better to go (one lane, or every lane holds as much).
    if (to == no_lane || from == no_lane ||
        (lanes_[to].generation.load() != 0 && lanes_[to].holding >= lanes_[from].holding)) {
        rotating_ = false;
        co_return;
    }
    const std::string failure = co_await start_lane(to);
    rotating_ = false;
    if (!failure.empty()) {  // the old lane goes on consuming
        tell(hooks_.on_connection, "lane change failed: " + failure);
        co_return;
    }
    // The new lane consumes; the old one stops taking deliveries and keeps
    // what it holds until each job is settled.
    auto& old = lanes_[from];
    if (!old.consumer_tag.empty() && old.channel.is_open()) {
        const std::string tag = std::exchange(old.consumer_tag, std::string());
        co_await old.channel.async_cancel(tag, asio::use_awaitable);
    }
    ++counters_.lane_changes;  // counted once the old lane takes no more
}

bool consumer::impl::intake_up() const noexcept {
    if (intake_ == no_lane) return false;
    const auto& lane = lanes_[intake_];
    return lane.generation.load() != 0 && lane.channel.is_open() && !lane.consumer_tag.empty();
}

bool consumer::impl::drop_generation(std::size_t lane, std::uint32_t gen, const std::string& why) {
    std::uint32_t expected = gen;
    // Only the current incarnation's loss counts (a close and a cancel may both report it).
    if (gen == 0 ||
        !lanes_[lane].generation.compare_exchange_strong(expected, 0, std::memory_order_acq_rel))
        return false;
    lanes_[lane].unsettled = 0;
    lanes_[lane].holding = 0;
    for (auto& it : held_.remove(gen, &job::generation)) {
        ++counters_.dropped;
        auto e = event_of(it.value, job_event::kind::dropped);
        e.reason = why;
        emit(std::move(e));
    }
    return true;
}

void consumer::impl::on_channel_lost(std::size_t lane, std::uint32_t gen, const std::string& why) {
    if (!drop_generation(lane, gen, why)) return;
    if (!stopping_) ++counters_.channel_losses;  // closing at stop() is no loss
    auto& l = lanes_[lane];
    l.consumer_tag.clear();
    if (l.channel.is_open()) l.channel.async_close([](std::error_code) {});  // a cancelled consumer
    l.channel = {};
    if (intake_ == lane) intake_ = no_lane;
    if (!stopping_) resubscribe_later(std::chrono::milliseconds(200));
}

void consumer::impl::resubscribe_later(std::chrono::milliseconds delay) {
    auto timer = std::make_shared<asio::steady_timer>(io_, delay);
    timer->async_wait([w = weak_from_this(), timer](boost::system::error_code) {
        auto s = w.lock();
        if (!s || s->stopping_ || s->subscribing_ || s->intake_up()) return;
        // A lost connection resubscribes from on_open once it is back.
        if (!s->conn_.is_open()) return;
        s->subscribing_ = true;
        asio::co_spawn(s->io_, s->subscribe(), asio::detached);
    });
}

void consumer::impl::requeue_all(std::vector<due_item<job>> items) {
    // Per lane: how many of the items are current there, and the highest tag.
    std::vector<std::size_t> count(lane_count_, 0);
    std::vector<std::uint64_t> highest(lane_count_, 0);
    for (const auto& it : items) {
        if (!current(it.value)) continue;
        ++count[it.value.lane];
        highest[it.value.lane] = std::max(highest[it.value.lane], it.value.delivery_tag);
    }
    std::vector<bool> at_once(lane_count_, false);
    for (std::size_t i = 0; i < lane_count_; ++i) {
        auto& lane = lanes_[i];
        // Only when nothing else of the lane is unsettled (no job running, no
        // copy awaiting its confirm) does one nack with `multiple` give back
        // exactly these: one broker operation instead of a walk per job.
        if (count[i] > 1 && count[i] == lane.unsettled && lane.channel.is_open()) {
            at_once[i] = true;
            lane.unsettled = 0;
            lane.holding = 0;
            counters_.requeued += count[i];
            lane.channel.async_nack(highest[i], {.multiple = true, .requeue = true}, [](std::error_code) {});
        }
    }
    for (auto& it : items) {
        if (!current(it.value) || !at_once[it.value.lane]) nack_requeue(it.value);
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
        auto pending = std::make_shared<std::size_t>(1);
        auto one_done = [pending, &cancelled] {
            if (--*pending == 0) cancelled.set_value();
        };
        for (std::size_t i = 0; i < lane_count_; ++i) {
            auto& lane = lanes_[i];
            if (!lane.channel.is_open() || lane.consumer_tag.empty()) continue;
            ++*pending;
            lane.channel.async_cancel(lane.consumer_tag, [one_done](std::error_code) { one_done(); });
        }
        one_done();
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
    auto closing_copies = copies_conn_.async_close(asio::use_future);
    conn_.async_close(asio::use_future).wait_for(std::chrono::seconds(10));
    closing_copies.wait_for(std::chrono::seconds(10));
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
    s.lane_changes = c.lane_changes;
    s.held = held_.size();
    s.held_bytes = held_.bytes();
    s.running = workers_ ? workers_->stats().running : 0;
    return s;
}

}  // namespace tarry
