// The consumer's life: construction, start, graceful stop, stats.
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
                                           std::function<void()> on_open,
                                           std::function<void(const std::string&)> on_lost) {
    amqp::connection_hooks h;
    if (on_open) h.on_open = [on_open = std::move(on_open)](const amqp::connection_info&) { on_open(); };
    auto tell = [say = hooks.on_connection, who](const std::string& what) { tarry::tell(say, who + what); };
    h.on_blocked = [tell](const std::string& reason) { tell("blocked by the broker: " + reason); };
    h.on_unblocked = [tell] { tell("unblocked"); };
    h.on_lost = [tell, on_lost = std::move(on_lost)](const amqp::diagnostics& d) {
        tell("lost: " + d.message);
        if (on_lost) on_lost("connection lost: " + d.message);
    };
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
    : config_(std::move(config)),
      options_((checked(options, handler), std::move(options))),
      hooks_(std::move(hooks)),
      counters_(std::make_shared<detail::core_counters>()),
      guard_(io_.get_executor()),
      conn_(io_.get_executor(), config_, connection_hooks_of(hooks_, "", [this] { on_open(); },
                                                            [this](const std::string& why) {
                                                                core_.connection_lost(why, now());
                                                                execute();
                                                            })),
      copies_conn_(io_.get_executor(), copies_config_of(config_),
                   connection_hooks_of(hooks_, "copies connection ", nullptr, nullptr)),
      publisher_(copies_conn_),
      store_(held_),
      core_(options_, store_, *counters_, retry::make_random_source(options_.retry_seed),
            std::chrono::steady_clock::now(), static_cast<bool>(hooks_.on_event)),
      channels_(core_.lanes().size()),
      workers_context_(std::make_shared<detail::worker_context>(
          std::move(handler), options_.is_permanent, hooks_.on_event, counters_, core_.lanes().generations(),
          [this] { asio::post(io_, [this] { settle_finished(); }); })),
      timer_(io_) {}

consumer::impl::~impl() { stop(); }

void consumer::impl::start() {
    std::promise<std::string> first;
    auto outcome = first.get_future();
    asio::post(io_, [this, p = std::move(first)]() mutable { started_.emplace(std::move(p)); });
    io_thread_ = std::thread([this] { io_.run(); });
    workers_.emplace(held_, options_.workers,
                     [ctx = workers_context_](due_item<detail::held_job>& it) { ctx->run(it); },
                     [](due_item<detail::held_job>&, std::exception_ptr) {});
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

bool consumer::impl::on_io_thread(std::function<void()> f, std::chrono::steady_clock::time_point deadline) {
    auto done = std::make_shared<std::promise<void>>();
    auto ran = done->get_future();
    asio::post(io_, [f = std::move(f), done] {
        f();
        done->set_value();
    });
    return ran.wait_until(deadline) == std::future_status::ready;
}

void consumer::impl::stop() {
    if (stopped_.exchange(true)) return;
    if (!io_thread_.joinable()) return;  // never started
    using clock = std::chrono::steady_clock;
    const auto begun = clock::now();
    const auto grace_ends = begun + options_.shutdown_grace;
    const auto poll = [&](auto done) {
        while (!done() && clock::now() < grace_ends) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
    // 1. No new deliveries: every consumer is cancelled.
    on_io_thread([this] {
        core_.stop(now());
        execute();
    }, grace_ends);
    poll([this] {
        std::size_t pending = 1;
        on_io_thread([&] { pending = cancels_pending_; }, clock::now() + std::chrono::milliseconds(100));
        return pending == 0;
    });
    // 2. Running jobs finish within the grace; the rest goes back, and a
    // handler still running is abandoned (the broker redelivers it).
    std::vector<detail::held_item> back;
    if (workers_) {
        auto rest = workers_->stop(grace_ends - clock::now());
        back = std::move(rest.not_started);
    }
    workers_context_->abandon_running(std::chrono::system_clock::now());
    for (auto& it : held_.drain()) back.push_back(std::move(it));
    auto items = std::make_shared<std::vector<detail::held_item>>(std::move(back));
    on_io_thread([this, items] {
        core_.give_back(std::move(*items), now());
        execute();
    }, std::max(grace_ends, clock::now() + std::chrono::milliseconds(100)));
    // 3. Copies in flight: their confirms release the acks of their originals.
    poll([this] { return copies_pending_.load() == 0; });
    // 4. Close (queued behind the acks and nacks above) within close_timeout,
    // then end the I/O thread.
    workers_context_->close();
    const auto closed_by = clock::now() + config_.close_timeout;
    auto closing_copies = copies_conn_.async_close(asio::use_future);
    auto closing = conn_.async_close(asio::use_future);
    closing.wait_until(closed_by);
    closing_copies.wait_until(closed_by);
    guard_.reset();
    io_.stop();
    io_thread_.join();
    workers_.reset();
}

consumer_stats consumer::impl::stats() const {
    consumer_stats s;
    const auto& c = *counters_;
    s.received = c.received;
    s.fast_path = c.fast_path;
    s.started = c.started;
    s.succeeded = c.succeeded;
    s.handler_failures = c.handler_failures;
    s.retried = c.retried;
    s.dead_lettered = c.dead_lettered;
    s.parked = c.parked;
    s.requeued = c.requeued;
    s.dropped = c.dropped;
    s.copy_failures = c.copy_failures;
    s.late_confirms = c.late_confirms;
    s.abandoned = c.abandoned;
    s.channel_losses = c.channel_losses;
    s.lane_changes = c.lane_changes;
    s.held = held_.size();
    s.held_bytes = held_.bytes();
    s.running = c.running;
    return s;
}

}  // namespace tarry
