// The publisher: puts the schedule on a job and publishes it with
// publisher confirms.
//
// Promises:
// - A publish completes only when the broker has confirmed it (success), or
//   with an error: publish_errc::delay_exceeds_max / invalid_schedule
//   (nothing sent), publish_errc::unroutable (mandatory, and no queue took
//   it), amqp::errc::publish_nacked, or the channel's / connection's error.
//   Errors are std::error_code values in the completion signature (never
//   exceptions), as with amqp::channel.
// - Every member may be called from any thread; the work is posted to the
//   connection's I/O thread. Completion handlers run on their associated
//   executor (by default: on the I/O thread; keep them short).
// - The publisher opens its own confirm channel lazily and opens a new one
//   after a channel close or a reconnect; publishes started meanwhile wait
//   for it, in order.
// - Returns: RabbitMQ sends the basic.return of an unroutable mandatory
//   message before the basic.ack that confirms it, on the same channel. A
//   return is matched to the earliest unconfirmed publish with the same
//   exchange, routing key, message_id and body, and that publish then
//   completes with unroutable. (Identical messages in flight at once are
//   interchangeable for this purpose.)
// The connection must outlive the publisher; the publisher may be destroyed
// with publishes in flight (they still complete).
#pragma once

#include "tarry/amqp/connection.hpp"
#include "tarry/publisher/publish_error.hpp"
#include "tarry/schedule/clock.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tarry {

/// When a job should run: now, at a wall-clock time, or after a delay
/// counted from the moment of publishing.
class job_schedule {
public:
    static job_schedule now() { return job_schedule(kind::now, {}, {}); }
    static job_schedule at(wall_time t) { return job_schedule(kind::at, t, {}); }
    template <class Rep, class Period>
    static job_schedule after(std::chrono::duration<Rep, Period> d) {
        return job_schedule(kind::after, {}, std::chrono::ceil<std::chrono::microseconds>(d));
    }
    /// The due time for a publish happening at `now`.
    wall_time due(wall_time now) const noexcept;

private:
    enum class kind { now, at, after };
    job_schedule(kind k, wall_time t, std::chrono::microseconds d) : kind_(k), at_(t), after_(d) {}
    kind kind_;
    wall_time at_;
    std::chrono::microseconds after_;
};

struct publisher_options {
    /// A schedule further out than this fails with delay_exceeds_max and
    /// nothing is sent. Nothing (default) = no limit.
    std::optional<std::chrono::milliseconds> max_delay;
    /// Ask the broker to return what no queue takes (default true): the
    /// publish then fails with unroutable.
    bool mandatory = true;
    /// delivery_mode 2 (persistent) unless the message sets it (default true).
    bool persistent = true;
};

/// Counters since construction. A snapshot.
struct publisher_stats {
    std::uint64_t published = 0;   ///< handed to a channel
    std::uint64_t confirmed = 0;   ///< completed with success
    std::uint64_t returned = 0;    ///< completed with unroutable
    std::uint64_t failed = 0;      ///< completed with any other error (nacks included)
};

class publisher {
public:
    using handler = boost::asio::any_completion_handler<void(std::error_code)>;

    /// Publishes over `conn`, which must outlive this object.
    explicit publisher(amqp::connection& conn, publisher_options options = {});
    ~publisher();
    publisher(const publisher&) = delete;
    publisher& operator=(const publisher&) = delete;

    /// Sets perform_job_at (a double, epoch seconds) and timestamp per
    /// `when` (see contract::write_schedule), a random message_id when
    /// none is set and delivery_mode per the options, then publishes →
    /// void(std::error_code).
    template <class Token>
    auto async_publish(std::string exchange, std::string routing_key, amqp::message msg,
                       job_schedule when, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](handler h, std::string x, std::string k, amqp::message m, job_schedule w) {
                publish_(std::move(x), std::move(k), std::move(m), &w, std::move(h));
            },
            token, std::move(exchange), std::move(routing_key), std::move(msg), when);
    }

    /// Publishes `msg` exactly as given (no schedule, id or mode added), with
    /// confirms and return matching → void(std::error_code). For copies that
    /// replace a delivery (parked, retried, dead-lettered).
    template <class Token>
    auto async_publish_as_is(std::string exchange, std::string routing_key, amqp::message msg,
                             Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](handler h, std::string x, std::string k, amqp::message m) {
                publish_(std::move(x), std::move(k), std::move(m), nullptr, std::move(h));
            },
            token, std::move(exchange), std::move(routing_key), std::move(msg));
    }

    publisher_stats stats() const;

    struct state;

private:
    void publish_(std::string exchange, std::string routing_key, amqp::message msg,
                  const job_schedule* when, handler h);

    std::shared_ptr<state> s_;
};

}  // namespace tarry
