// What a publisher shares with its pending operations: the confirm channel,
// publishes waiting for it to open, publishes in flight, the counters and
// the latest error. Kept alive by the publisher and by every pending
// operation, so a destroyed publisher's publishes still complete.
#pragma once

#include "in_flight.hpp"

#include "tarry/publisher/publisher.hpp"

#include <boost/asio/strand.hpp>

#include <atomic>
#include <deque>
#include <mutex>

namespace tarry {

struct publisher::state : std::enable_shared_from_this<publisher::state> {
    state(amqp::connection& c, publisher_options o);

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

    // On the strand only.
    amqp::channel channel_;
    std::uint64_t channel_number_ = 0;  ///< which of ours channel_ is (returns name theirs)
    bool detached_ = false;
    std::deque<outgoing> waiting_;      ///< for the channel being opened
    detail::in_flight flights_;
};

}  // namespace tarry
