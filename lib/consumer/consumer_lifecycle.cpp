// The consumer's life: construction, start, graceful stop, stats.
#include "consumer_impl.hpp"
#include "hook_calls.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/system_executor.hpp>
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
// The executor under the consumer's strand. Work is counted there: a guard
// of the strand itself would, on release, still touch the strand after the
// caller's io_context may have run out of work and been destroyed.
asio::any_io_executor underneath(const asio::any_io_executor& strand) {
    return strand.target<asio::strand<asio::any_io_executor>>()->get_inner_executor();
}

// The control-stream reader's settings from the consumer's options.
detail::control_reader::settings control_settings_of(const subscription_options& o) {
    detail::control_reader::settings s;
    s.queue = o.queue;
    s.checkpoint_every = o.control_checkpoint_every;
    s.catch_up_timeout = o.control_catch_up_timeout;
    // At least 5 s: a broker slow to deliver the first entries of a
    // subscription is not taken for a stalled one again and again.
    s.stall_timeout = std::max<std::chrono::milliseconds>(o.control_catch_up_timeout, std::chrono::seconds(5));
    return s;
}

// What a connection reports, as connection events (`copies`: the connection
// that publishes the copies); `on_open` (when set) runs after every
// (re)connect with what was settled, `on_lost` after every loss.
amqp::connection_hooks connection_hooks_of(std::function<void(const connection_event&)> tell, bool copies,
                                           std::function<void(const amqp::connection_info&)> on_open,
                                           std::function<void(const std::string&)> on_lost) {
    using kind = connection_event::kind;
    auto say = [tell, copies](kind k, std::string detail = {}, std::chrono::milliseconds delay = {},
                              unsigned attempt = 0) { tell({k, copies, std::move(detail), delay, attempt}); };
    amqp::connection_hooks h;
    if (on_open) h.on_open = std::move(on_open);
    h.on_blocked = [say](const std::string& reason) { say(kind::blocked, reason); };
    h.on_unblocked = [say] { say(kind::unblocked); };
    h.on_lost = [say, on_lost = std::move(on_lost)](const amqp::diagnostics& d) {
        say(kind::lost, d.message);
        if (on_lost) on_lost("connection lost: " + d.message);
    };
    h.on_reconnect_scheduled = [say](unsigned attempt, std::chrono::milliseconds delay, const amqp::diagnostics&) {
        say(kind::reconnecting, {}, delay, attempt);
    };
    h.on_closed = [say](const amqp::diagnostics& d) { say(kind::closed, d.code ? d.message : std::string()); };
    return h;
}

// The copies connection's config: the consuming one's, its name marked.
amqp::connection_config copies_config_of(amqp::connection_config c) {
    if (!c.connection_name.empty()) c.connection_name += " (copies)";
    return c;
}

// A publisher's options that give up a channel after `timeout` without a
// confirm. The copies' publisher waits copy_confirm_timeout, as a copy
// does. Run claims and markers go to the control stream, whose publishes
// RabbitMQ 3.10 can stop confirming on a channel for good after the
// stream's leader moved; a claim is made again every second and a marker
// is only waited for, so claim_confirm_timeout gives their channel up (and
// a held occurrence waits that long, not copy_confirm_timeout).
publisher_options confirming_within(std::chrono::milliseconds timeout) {
    publisher_options p;
    p.confirm_timeout = timeout;
    return p;
}
constexpr std::chrono::seconds claim_confirm_timeout{5};

// The hooks the consumer calls: the caller's (guarded: what they throw is
// counted and told), with every job event also offered to `events` (when
// lifecycle events are on) before the caller's hook.
consumer_hooks with_events(consumer_hooks hooks, std::shared_ptr<detail::event_outbox> events) {
    if (!events) return hooks;
    hooks.on_event = [events, user = std::move(hooks.on_event)](const job_event& e) {
        events->offer(e);
        if (user) user(e);
    };
    return hooks;
}

// Options that cannot work and an empty handler are refused before anything
// starts. Returns the options, their handler kind set from the handler's.
subscription_options checked(subscription_options o, const consumer::impl::handlers& h) {
    const auto refuse = [](std::string why) {
        throw tarry::error("tarry consumer", amqp::diagnostics::from(std::make_error_code(std::errc::invalid_argument),
                                                                     std::move(why)));
    };
    o.handlers = h.coroutines ? handler_kind::coroutines : handler_kind::threads;
    if (auto problem = validate(o)) refuse(problem->message);
    if (!h.threads && !h.coroutines) refuse("the job handler is empty");
    return o;
}
}  // namespace

consumer::impl::impl(asio::any_io_executor executor, amqp::connection_config config,
                     subscription_options options, handlers handler, consumer_hooks hooks)
    : config_(std::move(config)),
      options_(checked(std::move(options), handler)),
      events_out_(options_.publish_events ? std::make_shared<detail::event_outbox>(options_.max_events_waiting)
                                          : nullptr),
      counters_(std::make_shared<detail::core_counters>()),
      hooks_(with_events(detail::guarded(std::move(hooks), counters_), events_out_)),
      own_io_(executor ? nullptr : std::make_unique<asio::io_context>()),
      // A strand: with an io_context that several threads run, the
      // connections' completions, the timer and the publishers' confirms
      // would otherwise enter the core at once (consumer_threads_test).
      executor_(asio::make_strand(executor ? std::move(executor) : own_io_->get_executor())),
      guard_(underneath(executor_)),
      conn_(executor_, config_,
            connection_hooks_of([this](const connection_event& e) { tell(e); }, false,
                                [this](const amqp::connection_info& info) { on_open(info); },
                                [this](const std::string& why) {
                                    ++connection_losses_;
                                    if (control_) control_->detached();
                                    core_.connection_lost(why, now());
                                    execute();
                                })),
      copies_conn_(executor_, copies_config_of(config_),
                   connection_hooks_of([this](const connection_event& e) { tell(e); }, true,
                                       // Open (again): for health() (the hooks never heard of it),
                                       // and the events channel.
                                       [this](const amqp::connection_info&) {
                                           note({connection_event::kind::connected, true, {}, {}, 0});
                                           // Copies refused while it was down go out again now.
                                           core_.copies_connected(now());
                                           execute();
                                           if (events_) events_->connection_open();
                                       },
                                       nullptr)),
      publisher_(copies_conn_, confirming_within(options_.copy_confirm_timeout)),
      claims_publisher_(copies_conn_, confirming_within(claim_confirm_timeout)),
      events_(events_out_ ? std::make_shared<detail::event_publisher>(copies_conn_, executor_, events_out_,
                                                                       options_.events_exchange, options_.queue,
                                                                       options_.events_per_message)
                          : nullptr),
      cancel_tables_(options_.read_control_stream ? std::make_shared<detail::cancellations>(options_.tombstone_retention)
                                               : nullptr),
      cancels_(cancel_tables_.get()),
      claims_(options_.read_control_stream ? std::make_shared<detail::run_claims>() : nullptr),
      control_(cancel_tables_ ? std::make_shared<detail::control_reader>(
                                 conn_, claims_publisher_, control_settings_of(options_),
                                 detail::control_tables{cancel_tables_, claims_,
                                                        [this] {
                                                            core_.claims_read(now());
                                                            execute();
                                                        },
                                                        [this] { return core_.awaiting_claims() > 0; }},
                                 [this](bool attached, const std::string& detail) {
                                     using kind = connection_event::kind;
                                     tell({attached ? kind::control_attached : kind::control_failed, false,
                                           detail, {}, 0});
                                 })
                           : nullptr),
      store_(held_),
      core_(options_, store_, *counters_, retry::make_random_source(options_.retry_seed),
            std::chrono::steady_clock::now(), static_cast<bool>(hooks_.on_event), &cancels_, claims_.get()),
      channels_(core_.lanes().size()),
      workers_context_(std::make_shared<detail::worker_context>(
          std::move(handler.threads), detail::guarded(options_.is_permanent, counters_, hooks_.on_connection),
          hooks_.on_event, counters_, core_.lanes().incarnations(),
          [this] {
              asio::post(executor_, [w = weak_from_this()] {
                  if (auto s = w.lock()) s->settle_finished();
              });
          },
          cancel_tables_, claims_)),
      timer_(executor_),
      pings_(std::make_shared<detail::ping_relay>(executor_, own_io_ == nullptr)) {
    if (handler.coroutines)
        async_ = std::make_shared<detail::async_runner>(
            executor_, std::move(handler.executor), std::move(handler.coroutines), workers_context_,
            options_.max_in_flight,
            detail::async_runner::source{[this] {
                                             auto it = held_.try_pop();
                                             return it;
                                         },
                                         [this] { return held_.earliest_due(); },
                                         [] { return std::chrono::steady_clock::now(); }});
}

consumer::impl::~impl() { stop(); }

void consumer::impl::begin_start(std::function<void(const amqp::diagnostics&)> done) {
    if (began_.exchange(true)) throw std::logic_error("tarry consumer: start() or async_run() called twice");
    set_life(detail::health_state::life::running);
    if (own_io_) {
        io_thread_ = std::thread([io = own_io_.get()] { io->run(); });
        pings_->open();
    }
    if (events_) events_->start();
    if (!async_)
        workers_.emplace(held_, options_.workers,
                         [ctx = workers_context_](due_item<detail::held_job>& it) { ctx->run(it); },
                         [](due_item<detail::held_job>&, std::exception_ptr) {});
    asio::post(executor_, [self = shared_from_this(), done = std::move(done)]() mutable {
        self->started_ = std::move(done);
        self->spawn(&impl::connect);
    });
}

void consumer::impl::start() {
    std::promise<amqp::diagnostics> first;
    auto outcome = first.get_future();
    begin_start([&first](const amqp::diagnostics& d) { first.set_value(d); });
    if (const auto d = outcome.get(); d.code) {
        stop();
        throw tarry::error("tarry consumer: cannot start on '" + options_.queue + "'", d);
    }
}

asio::any_io_executor consumer::impl::completion_executor() const {
    if (own_io_) return asio::system_executor();
    return executor_;
}

void consumer::impl::when_stopped(std::function<void()> done) {
    {
        std::lock_guard lock(stopped_mutex_);
        if (!finished_) {
            when_stopped_.push_back(std::move(done));
            return;
        }
    }
    done();
}

void consumer::impl::stop_in_background(std::function<void()> done) {
    // This thread may be the consumer's last owner, and destroying the
    // consumer posts to its strand: the caller's executor keeps work until
    // the consumer is gone, so that its io_context runs on (and is not
    // destroyed) meanwhile. Its own io_context is the consumer's to end.
    std::optional<asio::executor_work_guard<asio::any_io_executor>> work;
    if (!own_io_) work.emplace(underneath(executor_));
    std::thread([self = shared_from_this(), done = std::move(done), work = std::move(work)]() mutable {
        self->stop();
        // Let go of the consumer before `done`: `done` completes the
        // caller's async_stop, after which the caller may destroy the
        // executor (ThreadSanitizer found a consumer destroyed later).
        self.reset();
        done();
        work.reset();
    }).detach();
}

void consumer::impl::on_io_thread(std::function<void()> f, std::chrono::steady_clock::time_point deadline) {
    auto done = std::make_shared<std::promise<void>>();
    auto ran = done->get_future();
    asio::post(executor_, [f = std::move(f), done] {
        f();
        done->set_value();
    });
    ran.wait_until(deadline);
}

void consumer::impl::stop() {
    if (stopped_.exchange(true)) return;
    if (!began_) return;  // never started
    set_life(detail::health_state::life::stopping);
    using clock = std::chrono::steady_clock;
    const auto begun = clock::now();
    const auto grace_ends = begun + options_.shutdown_grace;
    const auto poll = [&](auto done) {
        while (!done() && clock::now() < grace_ends) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
    // 1. No new deliveries: every consumer is cancelled.
    on_io_thread([this] {
        if (control_) control_->close();
        // A start still waiting (for a reconnect, say) ends now.
        started({make_error_code(amqp::errc::operation_cancelled), "stopped before it was consuming", {}});
        core_.stop(now());
        execute();
    }, grace_ends);
    poll([this] { return cancels_pending_.load() == 0; });
    // 2. Running jobs finish within the grace; the rest goes back, and a
    // handler still running is abandoned (the broker redelivers it).
    std::vector<detail::held_item> back;
    if (workers_) {
        auto rest = workers_->stop(grace_ends - clock::now());
        back = std::move(rest.not_started);
        workers_context_->abandon_running(std::chrono::system_clock::now());
    } else if (async_) {
        // Coroutines: none starts from now on; those still running when the
        // grace ends are abandoned and cancelled (terminal).
        on_io_thread([this] {
            held_.close();
            async_->close();
        }, grace_ends);
        poll([this] { return async_->in_flight() == 0; });
        on_io_thread([this] { async_->cancel_running(std::chrono::system_clock::now()); },
                     std::max(grace_ends, clock::now() + std::chrono::milliseconds(100)));
    }
    for (auto& it : held_.drain()) back.push_back(std::move(it));
    auto items = std::make_shared<std::vector<detail::held_item>>(std::move(back));
    on_io_thread([this, items] {
        core_.give_back(std::move(*items), now());
        execute();
    }, std::max(grace_ends, clock::now() + std::chrono::milliseconds(100)));
    // 3. Copies in flight: their confirms release the acks of their originals.
    poll([this] { return copies_pending_.load() == 0; });
    // 4. Close (queued behind the acks and nacks above) within close_timeout,
    // then end the I/O thread. The events still waiting go first, if they can.
    workers_context_->close();
    if (events_) events_->stop();
    const auto closed_by = clock::now() + config_.close_timeout;
    auto closing_copies = copies_conn_.async_close(asio::use_future);
    auto closing = conn_.async_close(asio::use_future);
    closing.wait_until(closed_by);
    closing_copies.wait_until(closed_by);
    on_io_thread([this] {
        timer_.cancel();
        // An abandoned coroutine never resumes on an executor the consumer lets go of.
        if (async_) async_->let_go();
    }, clock::now() + std::chrono::milliseconds(100));
    if (own_io_) {
        pings_->close();  // from now on nothing runs them on the I/O thread
        own_io_->stop();
        io_thread_.join();
    }
    workers_.reset();
    set_life(detail::health_state::life::stopped);
    // Told before the work guard goes, so that what they post to the
    // caller's executor runs before its io_context runs out of work.
    std::vector<std::function<void()>> waiting;
    {
        std::lock_guard lock(stopped_mutex_);
        finished_ = true;
        waiting.swap(when_stopped_);
    }
    for (auto& f : waiting) f();
    guard_.reset();
}

void consumer::impl::set_life(detail::health_state::life l) {
    std::lock_guard lock(health_mutex_);
    health_.set(l);
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
    s.cancelled = c.cancelled;
    s.scheduled = c.scheduled;
    s.skipped = c.skipped;
    s.deduplicated = c.deduplicated;
    s.channel_losses = c.channel_losses;
    s.lane_changes = c.lane_changes;
    s.hook_exceptions = c.hook_exceptions;
    if (events_out_) {
        s.events_published = events_out_->published();
        s.events_dropped = events_out_->dropped();
    }
    s.held = held_.size();
    s.held_bytes = held_.bytes();
    s.running = c.running;
    return s;
}

}  // namespace tarry
