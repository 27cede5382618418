// The consumer's Asio driver (see tarry/consumer/consumer.hpp): it owns the
// I/O - two connections, the lanes' channels, the publisher of copies, one
// timer - feeds the core (core/consumer_core.hpp) its inputs on the I/O
// thread and executes the actions it returns. It decides nothing itself.
//
// Threads: the I/O executor (the consumer's own io_context on a thread of
// its own, or the user's) is the only one to touch the core, the
// connections and the channels. Workers pop due jobs from held_ and run
// them (consumer_workers.hpp); their outcomes come back through a post.
// Everything posted or spawned on the executor holds the impl alive
// (shared_from_this) or checks it is still there (weak_from_this).
#pragma once

#include "async_runner.hpp"
#include "consumer_workers.hpp"
#include "control_reader.hpp"
#include "core/consumer_core.hpp"
#include "event_outbox.hpp"
#include "event_publisher.hpp"
#include "health_state.hpp"
#include "ping_relay.hpp"
#include "recent_dead_letters.hpp"
#include "run_claims.hpp"
#include "tombstone_oracle.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/publisher/publisher.hpp"
#include "tarry/schedule/delay_queue.hpp"
#include "tarry/schedule/worker_pool.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace tarry {

class consumer::impl : public std::enable_shared_from_this<consumer::impl> {
public:
    /// The handler: synchronous (`threads`) or asynchronous (`coroutines`,
    /// on `executor`, empty: the consumer's); one of the two is set.
    struct handlers {
        job_handler threads;
        async_job_handler coroutines;
        boost::asio::any_io_executor executor;
    };
    /// `executor` empty: an io_context and a thread of its own.
    impl(boost::asio::any_io_executor executor, amqp::connection_config config, subscription_options options,
         handlers handler, consumer_hooks hooks);
    ~impl();

    void start();
    void stop();
    /// Starts without blocking; `done` runs once, on the I/O executor, with
    /// an empty code once deliveries can flow, or with what failed.
    void begin_start(std::function<void(const amqp::diagnostics&)> done);
    /// stop() on a thread of its own, then `done` (on that thread).
    void stop_in_background(std::function<void()> done);
    /// `done` runs once stop() has finished (on the thread that stopped).
    void when_stopped(std::function<void()> done);
    /// Where completions of async_run / async_stop go by default: the
    /// caller's executor, or (on the consumer's own thread, which is gone
    /// by then) the system executor.
    boost::asio::any_io_executor completion_executor() const;
    consumer_stats stats() const;
    // What it shows of itself (consumer_metrics.cpp); any thread.
    consumer_metrics metrics() const;
    consumer_health health() const;
    held_jobs_page held_jobs(std::size_t limit, std::string_view after, std::error_code& ec) const;
    std::vector<std::string> wait_queues() const;
    void ping(detail::ping_relay::handler h) { pings_->ping(std::move(h)); }
    const subscription_options& options() const noexcept { return options_; }

private:
    // ---- the driver (consumer_driver.cpp), on the I/O thread ---------------
    static detail::moment now();
    /// Executes what the core decided, then re-arms the timer.
    void execute();
    void run(detail::core_action& a);
    /// Appends `claim` to the control stream (action claim).
    void append_claim(const control::run_claim& claim);
    void arm_timer();
    void on_open(const amqp::connection_info& info);
    /// Tells the hooks of e, and health_.
    void tell(const connection_event& e);
    /// Tells health_ alone.
    void note(const connection_event& e);
    void set_life(detail::health_state::life l);
    /// Spawns a coroutine of this impl on the executor, holding it alive.
    template <class F>
    void spawn(F member);
    boost::asio::awaitable<void> connect();
    boost::asio::awaitable<void> subscribe();
    /// Declares the work, dead-letter and wait queues, and the events
    /// exchange when lifecycle events are on. Returns what failed
    /// (an empty code when nothing did).
    boost::asio::awaitable<amqp::diagnostics> declare_topology();
    boost::asio::awaitable<void> start_lane(std::size_t lane);
    /// Opens lane's channel for a new incarnation and sets its prefetch.
    boost::asio::awaitable<amqp::diagnostics> open_lane(std::size_t lane);
    /// The first start is over: `started_` is told, once.
    void started(const amqp::diagnostics& d);
    /// Whether `d`, a failure of a step begun when connection_losses_ was
    /// `losses_then`, ends the first start: a refusal does; a connection
    /// lost meanwhile does not (the reconnect subscribes again).
    bool start_fails_on(const amqp::diagnostics& d, std::uint64_t losses_then) const;
    amqp::channel* channel_of(std::size_t lane, std::uint32_t incarnation);
    void settle_finished();

    // ---- stop (consumer_lifecycle.cpp) --------------------------------------
    /// Runs f on the I/O thread and waits until it has run or `deadline` passed.
    void on_io_thread(std::function<void()> f, std::chrono::steady_clock::time_point deadline);

    const amqp::connection_config config_;
    const subscription_options options_;
    // Lifecycle events waiting to be published (null when publish_events is
    // off): hooks_.on_event offers every event to it.
    const std::shared_ptr<detail::event_outbox> events_out_;
    const std::shared_ptr<detail::core_counters> counters_;
    const consumer_hooks hooks_;  // guarded (hook_calls.hpp): they throw nothing

    const std::unique_ptr<boost::asio::io_context> own_io_;  // when no executor was given
    // A strand of the given executor (or of own_io_'s): every handler of the
    // consumer's I/O, its connections' included, runs in sequence on it.
    const boost::asio::any_io_executor executor_;
    std::optional<boost::asio::executor_work_guard<boost::asio::any_io_executor>> guard_;
    amqp::connection conn_;  // consumes, acks, nacks
    // Publishes the copies (parked, retried, dead-lettered) on a connection of
    // its own: the broker blocks a connection that publishes during a
    // resource alarm, and the acks of other jobs must not wait behind it.
    amqp::connection copies_conn_;
    publisher publisher_;
    /// Run claims and the control stream's markers, on a channel of their
    /// own with a short confirm deadline (claim_confirm_timeout).
    publisher claims_publisher_;
    // Publishes the lifecycle events, on a channel of copies_conn_ (null when off).
    const std::shared_ptr<detail::event_publisher> events_;
    // The live cancellations (null when read_control_stream is off), the core's
    // view of them, and the reader that fills them.
    const std::shared_ptr<detail::cancellations> cancel_tables_;
    const detail::tombstone_oracle cancels_;
    // Which copy of a periodic occurrence runs (null when read_control_stream is off).
    const std::shared_ptr<detail::run_claims> claims_;
    const std::shared_ptr<detail::control_reader> control_;
    delay_queue<detail::held_job> held_;
    detail::delay_queue_store<steady_clock_source> store_;
    detail::consumer_core core_;
    std::vector<amqp::channel> channels_;  // by lane
    std::shared_ptr<detail::worker_context> workers_context_;
    std::optional<worker_pool<detail::held_job>> workers_;  // synchronous handlers
    std::shared_ptr<detail::async_runner> async_;           // asynchronous handlers
    std::thread io_thread_;

    // I/O thread only.
    boost::asio::steady_timer timer_;
    std::optional<steady_time> timer_at_;
    std::vector<detail::core_action> batch_;
    bool executing_ = false;
    bool wake_posted_ = false;
    bool subscribing_ = false;
    std::uint64_t connection_losses_ = 0;  // of conn_, counted by its on_lost
    std::function<void(const amqp::diagnostics&)> started_;  // until the first start is over

    // What metrics() and health() read from any thread.
    detail::recent_dead_letters dead_letters_;
    mutable std::mutex health_mutex_;
    detail::health_state health_;               // guarded by health_mutex_
    std::atomic<bool> consuming_{false};        // the core's consuming(), after each execute()
    const std::shared_ptr<detail::ping_relay> pings_;

    std::atomic<std::size_t> copies_pending_{0};  // the core's, for stop()
    std::atomic<std::size_t> cancels_pending_{0};  // basic.cancel sent, not yet answered (stop() waits)
    std::mutex stopped_mutex_;
    std::vector<std::function<void()>> when_stopped_;
    bool finished_ = false;  // stop() has finished
    std::atomic<bool> began_{false};
    std::atomic<bool> stopped_{false};
};

}  // namespace tarry
