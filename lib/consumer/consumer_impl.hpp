// The scheduling consumer's machinery (see tarry/consumer/consumer.hpp).
//
// Threads: the I/O thread runs io_ and owns everything AMQP - the
// connection, the lanes (channels deliveries come from), admission
// (delivery → hold, fast path, park or dead-letter) and settlement (ack,
// nack, republish-then-ack). Worker threads only pop due jobs, run the
// handler and post the outcome back to the I/O thread. Each lane's
// `generation` names its channel's incarnation: a job from an earlier one is
// neither run nor acknowledged.
//
// Lanes: one lane consumes at a time (`intake_`). Once it holds
// options_.lane_hold() jobs, the lane holding fewest starts consuming and
// the old one is cancelled; its held jobs stay unacknowledged on it until
// settled. So each channel's unacknowledged list, which the broker walks for
// every ack, stays short.
#pragma once

#include "packed_message.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/parking/wait_ladder.hpp"
#include "tarry/publisher/publisher.hpp"
#include "tarry/schedule/delay_queue.hpp"
#include "tarry/schedule/worker_pool.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

namespace tarry {

namespace detail {
/// A delivery held by the consumer until it is due.
struct held_job {
    std::uint64_t delivery_tag = 0;
    wall_time due{};
    detail::packed_message msg;    ///< properties as encoded + body: one allocation
    std::uint32_t generation = 0;  ///< incarnation of the lane's channel it came from
    std::uint32_t attempt = 1;
    std::uint16_t lane = 0;        ///< index of the lane it came from
    bool redelivered = false;
    bool counted_holding = false;  ///< counted in its lane's `holding`
};
// 40 bytes: every held job has one, so it counts (bench/RESULTS.md, scenario M).
static_assert(sizeof(held_job) <= 40);

/// One channel deliveries come from. `generation` is read by worker
/// threads; the rest belongs to the I/O thread.
struct consume_lane {
    amqp::channel channel;
    std::string consumer_tag;  ///< non-empty while it consumes
    std::atomic<std::uint32_t> generation{0};  ///< current incarnation; 0 = down
    std::size_t unsettled = 0;  ///< deliveries of this incarnation not yet acked or nacked
    std::size_t holding = 0;    ///< of those, the ones that were held
};

struct consumer_counters {
    std::atomic<std::uint64_t> received{0}, fast_path{0}, started{0}, succeeded{0}, failed{0},
        retried{0}, dead_lettered{0}, parked{0}, requeued{0}, dropped{0}, republish_failures{0},
        channel_losses{0}, lane_changes{0};
};
}  // namespace detail

class consumer::impl : public std::enable_shared_from_this<consumer::impl> {
public:
    impl(amqp::connection_config config, subscription_options options, job_handler handler,
         consumer_hooks hooks);
    ~impl();

    void start();
    void stop();
    consumer_stats stats() const;
    const subscription_options& options() const noexcept { return options_; }

private:
    using job = detail::held_job;
    using executor = boost::asio::io_context::executor_type;

    // ---- lifecycle (consumer_lifecycle.cpp) --------------------------------
    void on_open();
    boost::asio::awaitable<void> subscribe();
    /// Makes lane `i` the consuming one: opens its channel if it is down,
    /// basic.qos, basic.consume. Returns what failed, or "".
    boost::asio::awaitable<std::string> start_lane(std::size_t i);
    /// The lane to consume next: the one holding fewest, an open one first.
    std::size_t next_lane(std::size_t besides) const noexcept;
    /// The consuming lane holds its share: the next lane takes over.
    boost::asio::awaitable<void> rotate();
    bool intake_up() const noexcept;
    void on_channel_lost(std::size_t lane, std::uint32_t generation, const std::string& why);
    /// Forgets the lane's incarnation `generation` if it is the current one:
    /// drops its held jobs (the broker redelivers them). False if it was not current.
    bool drop_generation(std::size_t lane, std::uint32_t generation, const std::string& why);
    void resubscribe_later(std::chrono::milliseconds delay);
    /// Gives every job in `items` back to the broker: one basic.nack with
    /// `multiple` per lane when the items are all the lane has unsettled,
    /// else one nack each.
    void requeue_all(std::vector<due_item<job>> items);

    // ---- admission, on the I/O thread (consumer_admission.cpp) ------------
    void admit(std::size_t lane, std::uint32_t generation, amqp::delivery d);
    void hold(job j, wall_time now);
    void park_or_hold(job j, wall_time now);
    void push_held(job j);

    // ---- running, on worker threads (consumer_dispatch.cpp) ----------------
    void run(due_item<job>& item);
    /// The outcome of an exception a handler threw.
    job_outcome outcome_of(std::exception_ptr e) const;

    /// A job a worker ran, and what came of it, for the I/O thread.
    struct finished_job {
        job j;
        job_outcome outcome;
        wall_time started;
    };
    /// Settles every finished job queued by workers (I/O thread).
    void settle_finished();

    // ---- settlement, on the I/O thread (consumer_settlement.cpp) ----------
    void settle(job j, job_outcome outcome, wall_time started);
    void retry_or_dead_letter(job j, const job_outcome& failure, wall_time started);
    void ack(const job& j);
    void nack_requeue(const job& j);
    void park(job j, const parking::wait_queue& to, wall_time now);
    /// Dead-letters `j` with `reason`; `copy` is the dead letter to send
    /// (made from j with the reason when not given). `copy_name` as for
    /// replace().
    void dead_letter(job j, std::string reason, std::optional<amqp::message> copy = {},
                     const char* copy_name = "dead letter");
    /// Dead-letters `j`, whose `copy_name` does not fit a frame, with
    /// reason unreadable (detail::unfit_dead_letter).
    void dead_letter_unfit(job j, const char* copy_name);
    /// Publishes `copy`; on confirm acks `j` and calls done(); on failure
    /// leaves `j` unacknowledged (requeued after a pause) and reports it.
    /// A copy refused unsent because its properties do not fit a frame
    /// (it would fail the same way every time) is no such failure: `j` is
    /// dead-lettered unreadable instead, unless `copy_name` is null (the
    /// copy is that dead letter already).
    void replace(job j, std::string exchange, std::string routing_key, amqp::message copy,
                 std::function<void(const job&)> done, const char* copy_name);

    void emit(job_event e) const;
    job_event event_of(const job& j, job_event::kind k) const;
    job_event event_of(const job& j, job_event::kind k, const amqp::basic_properties& p) const;
    bool current(const job& j) const noexcept {
        return j.generation == lanes_[j.lane].generation.load(std::memory_order_acquire);
    }
    /// The lane's channel when `j` came from its current incarnation and it is open.
    amqp::channel* settling_channel(const job& j);

    const subscription_options options_;
    const contract::schedule_rules rules_;
    const parking::wait_ladder ladder_;
    const job_handler handler_;
    const consumer_hooks hooks_;
    retry::random_source random_;  // I/O thread only (retry jitter)
    unsigned refused_in_a_row_ = 0;          // I/O thread only: copies refused since the last confirmed one
    retry::duration last_refusal_pause_{0};  // I/O thread only

    boost::asio::io_context io_;
    std::optional<boost::asio::executor_work_guard<executor>> guard_;
    amqp::connection conn_;         // consumes, acks, nacks
    // Publishes the copies (parked, retried, dead-lettered) on a connection of
    // its own: the broker blocks a connection that publishes during a
    // resource alarm, and the acks of other jobs must not wait behind it.
    amqp::connection copies_conn_;
    publisher publisher_;
    delay_queue<job> held_;
    std::optional<worker_pool<job>> workers_;
    std::thread io_thread_;

    const std::unique_ptr<detail::consume_lane[]> lanes_;
    const std::size_t lane_count_;

    // I/O thread only.
    static constexpr std::size_t no_lane = static_cast<std::size_t>(-1);
    std::size_t intake_ = no_lane;  // the consuming lane
    bool rotating_ = false;
    bool wake_posted_ = false;  // a wake_ready() for quietly pushed ready jobs is queued
    bool subscribing_ = false;
    bool stopping_ = false;
    std::optional<std::promise<std::string>> started_;  // "" or why the first subscribe failed

    std::uint32_t last_generation_ = 0;     // I/O thread: the last incarnation number given
    std::atomic<std::size_t> in_flight_{0};  // republishes awaiting their confirm
    std::mutex outcomes_mutex_;
    std::vector<finished_job> outcomes_;  // run, not yet settled; a post is queued when non-empty
    std::atomic<bool> stopped_{false};
    detail::consumer_counters counters_;
};

}  // namespace tarry
