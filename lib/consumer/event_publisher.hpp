// Publishes a consumer's lifecycle events (subscription_options::
// publish_events; docs/events.md) from a thread of its own, taking them from
// an event_outbox: tarry::to_json(event, queue) to the events exchange with
// routing key `<event>.<queue>`, application/json, transient, timestamped;
// no confirms, no mandatory.
//
// Its channel is on the copies connection, never on the consuming one (a
// resource alarm blocks a connection that publishes, acks included). The
// channel is opened when that connection opens (connection_open()) and,
// after a loss with the connection still open, again a second later.
// Events taken while the channel is down or the broker blocks the
// connection are dropped and counted; nothing waits for the broker.
//
// Threads: connection_open() on the connection's I/O executor; start() and
// stop() from any other thread (stop() publishes what is still queued, if
// it can, and joins the thread); the outbox's counters from any thread.
#pragma once

#include "event_outbox.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/message.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace tarry::detail {

class event_publisher : public std::enable_shared_from_this<event_publisher> {
public:
    /// `copies` must outlive the publisher's thread (stop() before it goes).
    /// `per_message`: subscription_options::events_per_message (event_messages).
    event_publisher(amqp::connection& copies, boost::asio::any_io_executor io, std::shared_ptr<event_outbox> outbox,
                    std::string exchange, std::string queue, std::size_t per_message = 1);
    ~event_publisher();

    void start();
    void stop();
    /// The copies connection is open (again): opens the events channel.
    void connection_open();

    /// How long after the events channel was lost it is opened again.
    static constexpr std::chrono::milliseconds reopen_after{1000};
    /// With several events a message: how long the first event waits for
    /// others to share its message.
    static constexpr std::chrono::milliseconds gather_for{5};

private:

    void run();
    void open_channel();
    void reopen_later();

    amqp::connection& copies_;
    const boost::asio::any_io_executor io_;
    const std::shared_ptr<event_outbox> outbox_;
    const std::string exchange_;
    const std::string queue_;
    const std::size_t per_message_;
    std::thread thread_;

    std::mutex channel_mutex_;
    amqp::channel channel_;  // guarded by channel_mutex_; set on the I/O executor
    std::atomic<bool> opening_{false};  // an open is under way
    bool stopped_ = false;   // guarded by channel_mutex_
};

/// The message of one lifecycle event (its body: tarry::to_json(e, queue)).
amqp::message event_message(const job_event& e, std::string_view queue);
/// Its routing key: `<event>.<queue>`.
std::string event_routing_key(const job_event& e, std::string_view queue);

/// A message of lifecycle events, ready to publish.
struct outgoing_event {
    std::string routing_key;
    amqp::message msg;
    std::size_t events = 1;  ///< how many events it carries
};
/// The messages for `events` (oldest first). per_message 1: one each
/// (event_message), in order. Above 1: the events grouped by kind, the
/// kinds in the order of their first event, each kind's in order, in
/// messages of up to per_message whose body is a JSON array of the events'
/// objects (the timestamp the first one's).
std::vector<outgoing_event> event_messages(const std::vector<job_event>& events, std::string_view queue,
                                           std::size_t per_message);

}  // namespace tarry::detail
