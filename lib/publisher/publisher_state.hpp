// What a publisher shares with its pending operations: the confirm channel,
// publishes waiting for it to open, publishes in flight and their confirm
// deadline, the counters and the latest error. Kept alive by the publisher
// and by every pending operation, so a destroyed publisher's publishes
// still complete.
#pragma once

#include "in_flight.hpp"

#include "tarry/control/stream_reading.hpp"
#include "tarry/parking/delay_cascade.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>
#include <string>

namespace tarry {

struct publisher::state : std::enable_shared_from_this<publisher::state> {
    state(amqp::connection& c, publisher_options o);

    /// What runs once a control stream is declared (move-only).
    using declared_handler = boost::asio::any_completion_handler<void(amqp::diagnostics)>;

    struct outgoing {
        std::string exchange, routing_key;
        amqp::message msg;
        completion done;
    };

    /// Starts opening a channel when there is none and none is opening.
    /// Any thread, while the publisher lives.
    void ensure_channel();
    /// Sends `o` on the channel, or keeps it until the channel being opened
    /// is ready. On the strand.
    void enqueue(outgoing o);
    /// Completes `h` with `why` (success when its code is empty) through
    /// its associated executor (default: the strand), counts the outcome
    /// and records a failure for last_error(). On the strand.
    void complete(completion h, amqp::diagnostics why);
    /// complete(), posted to the strand: for a refusal found on the
    /// caller's thread (a handler never runs inside the starting call).
    /// Any thread.
    void refuse(completion h, amqp::diagnostics why);
    /// Calls `then` on the strand once `queue`'s control stream is
    /// declared (with its fixed arguments, on a channel of its own), with
    /// the declare's failure or an empty code; at once when this publisher
    /// declared it before. Any thread, while the publisher lives.
    void with_control_stream(const std::string& queue, declared_handler then);
    /// A command on `queue`'s control stream: declares the stream if need
    /// be, then publishes `entry` (a tombstone, a schedule upsert or
    /// removal) to it and `copy` (a reschedule's new copy, a schedule's
    /// first occurrence) to the queue, in that order; completes `h` once
    /// both are confirmed, with the first failure. Any thread, while the
    /// publisher lives.
    void run_command(std::string queue, amqp::message entry, std::optional<amqp::message> copy, completion h);
    /// Reads `queue`'s control stream once, up to its end
    /// (control::async_read_stream), completing `h` on the strand;
    /// channel_closed once the publisher is gone. Any thread.
    void read_control_stream(std::string queue, std::chrono::milliseconds timeout, control::entry_callback on_entry,
                             completion h);
    /// `queue`'s control stream is gone (a tombstone came back
    /// unroutable): the next command declares it again. Any thread.
    void forget_control_stream(const std::string& queue);
    /// What runs once a delayed publish's way is ready (move-only): the
    /// cascade, or why there is none.
    using cascade_handler =
        boost::asio::any_completion_handler<void(amqp::diagnostics, std::shared_ptr<const parking::delay_cascade>)>;
    /// Calls `then` on the strand with the delay cascade (its spec from the
    /// options, else read from the broker the first time) once
    /// `destination` was found to exist (unroutable if not) and its delivery
    /// queue is declared, on a channel of its own;
    /// at once when both were done before. Any thread, while the publisher
    /// lives.
    void with_delay_destination(parking::cascade_destination destination, cascade_handler then);
    /// Sends `o` through the delay cascade to its exchange and routing key,
    /// waiting `delay` rounded to whole units as `rounding` says: to the
    /// destination at once when that is no unit. Above the cascade's
    /// longest: refused (delay_exceeds_max), or with `cap` the longest.
    /// Strips x-death (a copy keeping it would look like a dead-letter
    /// cycle to the broker, which drops it silently). Any thread, while the
    /// publisher lives, after ensure_channel().
    void send_delayed(outgoing o, std::chrono::milliseconds delay, parking::unit_rounding rounding, bool cap);
    amqp::diagnostics last_error() const;
    /// The publisher is gone (its destructor): the connection is not used
    /// after this returns, and the channel is closed once nothing is
    /// pending. Any thread.
    void detach();

    const publisher_options options;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    std::atomic<std::uint64_t> published{0}, confirmed{0}, nacked{0}, returned{0}, failed{0};

private:
    void open_locked();
    void opened(std::uint64_t number, amqp::diagnostics why, const amqp::channel& ch);
    /// Records why a publish failed (for last_error()).
    void note(const amqp::diagnostics& why);
    void send(outgoing o);
    void on_return(std::uint64_t number, const amqp::returned_message& r);
    /// Arms the confirm deadline for the oldest publish in flight, unless
    /// armed or none waits (or no confirm_timeout).
    void watch_confirms();
    /// The deadline passed: gives up the channels whose publishes waited
    /// confirm_timeout, failing those publishes, closing the channel.
    void confirms_overdue();
    void close_if_done();

    mutable std::mutex error_mutex_;
    amqp::diagnostics last_error_;

    // Guarded by mutex_. conn_ is cleared by detach(), and used only with
    // mutex_ held, so that it is never used once the publisher is gone.
    std::mutex mutex_;
    amqp::connection* conn_;
    bool opening_ = false;           ///< a channel is being opened
    amqp::channel current_;          ///< the channel last opened (a copy of channel_)
    std::uint64_t channels_opened_ = 0;
    std::set<std::string, std::less<>> control_streams_;  ///< queues whose stream this publisher declared
    std::shared_ptr<const parking::delay_cascade> cascade_;  ///< once known
    std::set<std::string, std::less<>> delivery_queues_;     ///< destination words declared
    /// Destination words being declared, and who waits for each: one
    /// declaration per destination however many publishes start at once.
    std::map<std::string, std::vector<cascade_handler>, std::less<>> delivery_waiting_;

    // On the strand only.
    amqp::channel channel_;
    std::uint64_t channel_number_ = 0;  ///< which of ours channel_ is (returns name theirs)
    bool detached_ = false;
    std::deque<outgoing> waiting_;      ///< for the channel being opened
    detail::in_flight flights_;
    boost::asio::steady_timer confirm_deadline_;  ///< armed while a publish waits (confirm_timeout)
    bool deadline_armed_ = false;
};

}  // namespace tarry
