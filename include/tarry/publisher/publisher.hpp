// The publisher: puts the schedule on a job and publishes it with
// publisher confirms.
//
// Promises:
// - A publish completes exactly once, and only when the broker has
//   confirmed it (success), or with an error: publish_errc::delay_exceeds_max
//   / invalid_schedule (nothing sent), publish_errc::unroutable (mandatory,
//   and no queue took it), amqp::errc::publish_nacked (the broker refused
//   it, e.g. a full queue with x-overflow reject-publish),
//   publish_errc::confirm_timeout (no confirm within
//   publisher_options::confirm_timeout, default 30 s), or the channel's
//   / connection's error (e.g. NOT_FOUND for a missing exchange,
//   not_connected between reconnects). Errors are std::error_code values in
//   the completion signature (never exceptions), as with amqp::channel.
// - Why a publish failed: each publish has an overload taking an
//   `amqp::diagnostics& diag` before the token. When the handler runs,
//   `diag` holds that publish's failure and no other's: its code, one line a
//   person can act on (the broker's words when it closed the channel, e.g.
//   "basic.publish: the broker closed channel 1: 404 NOT_FOUND - no exchange
//   'x' in vhost '/'", the exchange and routing key of a returned message,
//   the numbers of a refused schedule) and the broker's reply when there is
//   one; it is cleared on success. Keep `diag` alive, untouched, until the
//   handler runs (see tarry/amqp/channel.hpp).
// - Every member may be called from any thread; the work is posted to the
//   connection's executor through the publisher's own strand. Completion
//   handlers run on their associated executor (by default that strand, on
//   the connection's I/O thread: keep them short), never inside the
//   starting call. Publishes from one thread go out in the order started.
// - The publisher owns one confirm channel (confirm.select), opened on the
//   first publish. When it closes (the broker closed it, e.g. after a
//   publish to a missing exchange, or the connection was lost) its pending
//   publishes fail with that error and the next publish opens a new one
//   (not_connected while the connection is down). A channel on which a
//   publish waited confirm_timeout is closed by the publisher, its pending
//   publishes failing with confirm_timeout. Publishes started while
//   it opens wait for it: never more than one channel opens at a time.
// - Returns: RabbitMQ sends the basic.return of an unroutable mandatory
//   message before the basic.ack that confirms it, on the same channel. A
//   return is matched to the earliest publish on that channel that is not
//   yet confirmed nor matched to an earlier return and has the same
//   exchange, routing key, message_id and body bytes (hashed); that publish
//   then completes with unroutable when its ack arrives. Identical messages
//   in flight at once are interchangeable for this purpose.
// Ownership: the connection must outlive the publisher. The publisher may
// be destroyed with publishes in flight: they still complete, and its
// channel is closed once they have. (One that finds the channel closed
// after the destruction fails with amqp::errc::channel_closed: no new
// channel is opened then.)
#pragma once

#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/periodic/recurrence.hpp"
#include "tarry/parking/delay_cascade.hpp"
#include "tarry/publisher/publish_error.hpp"
#include "tarry/time/time_points.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tarry {

/// When a job should run: now, at a wall-clock time, or after a delay
/// counted from the moment async_publish is called. A plain value.
class job_schedule {
public:
    /// Due at once: at the publish.
    static job_schedule now() noexcept { return job_schedule(kind::now, {}, {}); }
    /// Due at wall-clock time `t`.
    static job_schedule at(wall_time t) noexcept { return job_schedule(kind::at, t, {}); }
    /// Rounded up to the microsecond. A delay past ±1e18 µs (tens of
    /// millennia) is held as that bound, so the publish fails with
    /// invalid_schedule (or delay_exceeds_max under a max_delay); a NaN
    /// delay fails with invalid_schedule.
    template <class Rep, class Period>
    static job_schedule after(std::chrono::duration<Rep, Period> d) noexcept {
        using us = std::chrono::microseconds;
        constexpr us bound(1'000'000'000'000'000'000);
        const std::chrono::duration<long double, std::micro> wide = d;
        if (std::isnan(wide.count())) return job_schedule(kind::invalid, {}, {});
        if (wide >= bound) return job_schedule(kind::after, {}, bound);
        if (wide <= -bound) return job_schedule(kind::after, {}, -bound);
        return job_schedule(kind::after, {}, std::chrono::ceil<us>(d));
    }

    /// The due time of a publish happening at `now`; saturates at
    /// wall_time::min() / max() instead of overflowing.
    wall_time due(wall_time now) const noexcept;
    /// False only for a schedule that can never be published (NaN delay).
    bool valid() const noexcept { return kind_ != kind::invalid; }

private:
    enum class kind { now, at, after, invalid };
    job_schedule(kind k, wall_time t, std::chrono::microseconds d) noexcept : kind_(k), at_(t), after_(d) {}
    kind kind_;
    wall_time at_;
    std::chrono::microseconds after_;
};

/// How a publisher publishes: limits, flags, the delay cascade, parking far
/// jobs, the confirm timeout. A plain value; each field says its default.
struct publisher_options {
    /// A schedule further out than this (due - now) fails with
    /// delay_exceeds_max and nothing is sent. Nothing (default) = no limit.
    std::optional<std::chrono::milliseconds> max_delay;
    /// Ask the broker to return what no queue takes (default true): the
    /// publish then fails with unroutable. False: such a message is dropped
    /// by the broker and the publish succeeds.
    bool mandatory = true;
    /// async_publish sets delivery_mode 2 (persistent) unless the message
    /// sets it (default true).
    bool persistent = true;
    /// The delay cascade async_publish_delayed goes through: its spec, or
    /// nothing (default) to read it from the broker on first use, from the
    /// descriptor of the cascade declared under delay_cascade_prefix.
    std::optional<parking::cascade_spec> delay_cascade;
    /// The prefix of the cascade whose descriptor is read when
    /// delay_cascade is nothing. Default "tarry.delay".
    std::string delay_cascade_prefix = "tarry.delay";
    /// Far jobs parked by the publisher: an async_publish job due further
    /// out than this (due − now) waits in the delay cascade (as
    /// async_publish_delayed, with its wait rounded down to whole units and
    /// capped at the cascade's longest) and reaches its queue park_margin
    /// before it is due; so no consumer takes, holds or parks it before
    /// then, and jobs due sooner never queue behind it. Nothing (default):
    /// every job goes to its queue at once. A job with an expiration goes
    /// at once. The cascade must exist (tarry topology declare): if it
    /// does not, the publish fails and nothing is sent. async_reschedule
    /// does not park.
    std::optional<std::chrono::milliseconds> park_beyond;
    /// A job parked by the publisher reaches its queue this long (at least
    /// a few ms of the broker's own latency less) before it is due.
    std::chrono::milliseconds park_margin{250};
    /// A publish not confirmed within this fails with
    /// publish_errc::confirm_timeout, and so does every publish then
    /// unconfirmed on the same channel: the channel is closed, the next
    /// publish opens another. The message may still have been taken (at
    /// least once). A broker can stop confirming on one channel for good
    /// while a new one works (RabbitMQ 3.10: a stream's publishes after its
    /// leader moved in a partition); a resource alarm also holds confirms
    /// back. Nothing, or a value of 0 or less: wait for ever. Default 30 s.
    std::optional<std::chrono::milliseconds> confirm_timeout = std::chrono::seconds(30);
};

/// Counters since construction. A snapshot; each counter is read on its
/// own (they may be a few publishes apart).
struct publisher_stats {
    std::uint64_t published = 0;  ///< handed to a channel
    std::uint64_t confirmed = 0;  ///< completed with success
    std::uint64_t nacked = 0;     ///< completed with amqp::errc::publish_nacked
    std::uint64_t returned = 0;   ///< completed with unroutable
    std::uint64_t failed = 0;     ///< completed with any other error (refused ones included)
};

/// Publishes jobs with their schedule under publisher confirms, and cancels,
/// reschedules and periodic schedules through the queue's control stream.
/// Any thread; each operation completes exactly once with a
/// std::error_code; the connection must outlive it (see this header's
/// opening comment for every promise).
class publisher {
public:
    /// A type-erased completion handler of `void(std::error_code)`.
    using handler = boost::asio::any_completion_handler<void(std::error_code)>;

    /// Publishes over `conn`, which must outlive this object. Opens nothing
    /// yet.
    explicit publisher(amqp::connection& conn, publisher_options options = {});
    ~publisher();
    publisher(const publisher&) = delete;
    publisher& operator=(const publisher&) = delete;

    /// Sets perform_job_at (a double, epoch seconds) and timestamp per
    /// `when` (see contract::write_schedule), x-tarry-generation (µs since
    /// the epoch now, strictly increasing within the process; replacing any
    /// given), a fresh random message_id (32 hex digits) when none is set
    /// and delivery_mode per the options, then publishes with confirms →
    /// void(std::error_code).
    /// Refused before sending: delay_exceeds_max (above max_delay),
    /// invalid_schedule (due before 1970 or beyond the clock's range).
    template <class Token>
    auto async_publish(std::string exchange, std::string routing_key, amqp::message msg,
                       job_schedule when, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string x, std::string k, amqp::message m, job_schedule w) {
                publish_(std::move(x), std::move(k), std::move(m), &w, std::move(h));
            },
            token, std::move(exchange), std::move(routing_key), std::move(msg), when);
    }
    /// The same, with this publish's diagnostics in `diag`.
    template <class Token>
    auto async_publish(std::string exchange, std::string routing_key, amqp::message msg,
                       job_schedule when, amqp::diagnostics& diag, Token&& token) {
        return async_publish(std::move(exchange), std::move(routing_key), std::move(msg), when,
                             amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Publishes `msg` exactly as given (no schedule, id or delivery mode
    /// added), with confirms and the same return matching →
    /// void(std::error_code). For copies that replace a delivery (parked,
    /// retried, dead-lettered).
    template <class Token>
    auto async_publish_as_is(std::string exchange, std::string routing_key, amqp::message msg,
                             Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string x, std::string k, amqp::message m) {
                publish_(std::move(x), std::move(k), std::move(m), nullptr, std::move(h));
            },
            token, std::move(exchange), std::move(routing_key), std::move(msg));
    }
    /// The same, with this publish's diagnostics in `diag`.
    template <class Token>
    auto async_publish_as_is(std::string exchange, std::string routing_key, amqp::message msg,
                             amqp::diagnostics& diag, Token&& token) {
        return async_publish_as_is(std::move(exchange), std::move(routing_key), std::move(msg),
                                   amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Cancels job `job_id` (its message_id) of `queue`: appends a tombstone
    /// to the queue's control stream (tarry/control/control_stream.hpp;
    /// declared with its fixed arguments by this publisher's first command
    /// for the queue) → void(std::error_code), once the broker confirmed
    /// it. Every consumer of the queue then drops, when it admits or
    /// releases them, the job's copies published before (a lower
    /// x-tarry-generation; a message without one is generation 0); a run
    /// already started is not interrupted. Cancelling an id that is unknown
    /// or already done succeeds and does nothing (the two cannot be told
    /// apart). Refused before sending: amqp::errc::invalid_argument for an
    /// empty job id or one over 255 bytes. The stream's declare can fail
    /// with the broker's 406 (it exists with other arguments) or 403.
    template <class Token>
    auto async_cancel(std::string queue, std::string job_id, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string q, std::string id) { cancel_(std::move(q), std::move(id), std::move(h)); },
            token, std::move(queue), std::move(job_id));
    }
    /// The same, with this command's diagnostics in `diag`.
    template <class Token>
    auto async_cancel(std::string queue, std::string job_id, amqp::diagnostics& diag, Token&& token) {
        return async_cancel(std::move(queue), std::move(job_id),
                            amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Reschedules job `job_id` of `queue` in one idempotent step, never
    /// remove-then-add: a tombstone of a new generation g and `msg` as the
    /// job's new copy (message_id = job_id, x-tarry-generation = g, due per
    /// `when`, persistent per the options, to the default exchange with
    /// routing key `queue`), both confirmed → void(std::error_code). Every
    /// earlier copy is dropped wherever it is (held, parked, not yet
    /// delivered); the new one runs once, at `when`. On an error the step
    /// may be half done (the tombstone without its copy cancels the job):
    /// repeat it; a later reschedule supersedes every earlier one. Refused
    /// before sending anything: as async_publish (delay_exceeds_max,
    /// invalid_schedule) and as async_cancel.
    template <class Token>
    auto async_reschedule(std::string queue, std::string job_id, job_schedule when, amqp::message msg,
                          Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string q, std::string id, job_schedule w, amqp::message m) {
                reschedule_(std::move(q), std::move(id), w, std::move(m), std::move(h));
            },
            token, std::move(queue), std::move(job_id), when, std::move(msg));
    }
    /// The same, with this command's diagnostics in `diag`.
    template <class Token>
    auto async_reschedule(std::string queue, std::string job_id, job_schedule when, amqp::message msg,
                          amqp::diagnostics& diag, Token&& token) {
        return async_reschedule(std::move(queue), std::move(job_id), when, std::move(msg),
                                amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    // ---- periodic schedules (docs/periodic.md) ---------------------------

    /// Upserts periodic schedule `schedule_id` of `queue`: appends its spec
    /// and `msg` (the occurrences' template: body and properties) to the
    /// queue's control stream with a new generation g, then publishes the
    /// chain's first occurrence (due at recurrence::first(now + 250 ms): the
    /// command's own round trips come first, so that it arrives on time) to
    /// the default exchange with routing key `queue`; both confirmed →
    /// void(std::error_code). Idempotent: the upsert supersedes every
    /// earlier one of the id (their occurrences are dropped when a consumer
    /// admits or releases them) and starts the one new chain; of ten
    /// concurrent upserts the last written wins. Refused before anything is
    /// sent: an empty id or one over 230 bytes (amqp::errc::invalid_argument;
    /// the occurrence id `<id>@<nominal>` must fit 255), the spec's refusals
    /// (tarry::periodic::errc), a spec with no occurrence left
    /// (periodic::errc::invalid_schedule). On an error after sending, repeat
    /// the upsert: a repeat supersedes every part of the failed one.
    template <class Token>
    auto async_upsert_schedule(std::string queue, std::string schedule_id, periodic::schedule_spec spec,
                               amqp::message msg, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string q, std::string id, periodic::schedule_spec sp, amqp::message m) {
                upsert_schedule_(std::move(q), std::move(id), std::move(sp), std::move(m), std::move(h));
            },
            token, std::move(queue), std::move(schedule_id), std::move(spec), std::move(msg));
    }
    /// The same, with this command's diagnostics in `diag`.
    template <class Token>
    auto async_upsert_schedule(std::string queue, std::string schedule_id, periodic::schedule_spec spec,
                               amqp::message msg, amqp::diagnostics& diag, Token&& token) {
        return async_upsert_schedule(std::move(queue), std::move(schedule_id), std::move(spec), std::move(msg),
                                     amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Removes schedule `schedule_id` of `queue`: appends a removal of a new
    /// generation, confirmed → void(std::error_code). An occurrence already
    /// queued, parked or held is acked without running when a consumer
    /// releases it (event `cancelled`), and publishes no successor. Removing
    /// an unknown id succeeds and does nothing. Refusals as for the upsert's id.
    template <class Token>
    auto async_remove_schedule(std::string queue, std::string schedule_id, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string q, std::string id) { remove_schedule_(std::move(q), std::move(id), std::move(h)); },
            token, std::move(queue), std::move(schedule_id));
    }
    /// The same, with this command's diagnostics in `diag`.
    template <class Token>
    auto async_remove_schedule(std::string queue, std::string schedule_id, amqp::diagnostics& diag, Token&& token) {
        return async_remove_schedule(std::move(queue), std::move(schedule_id),
                                     amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// The live schedules of `queue` (their latest upserts, by id), read
    /// from the control stream up to its end on a channel of its own →
    /// void(std::error_code, std::vector<control::schedule_upsert>). A queue
    /// whose stream does not exist has none (success, empty). Fails with
    /// std::errc::timed_out when the stream is not read to its end within
    /// `timeout`, or with the channel's or connection's error.
    template <class Token>
    auto async_list_schedules(std::string queue, std::chrono::milliseconds timeout, amqp::diagnostics& diag,
                              Token&& token) {
        auto with_diag = amqp::detail::with_diagnostics(diag, std::forward<Token>(token));
        return boost::asio::async_initiate<decltype(with_diag),
                                           void(std::error_code, std::vector<control::schedule_upsert>)>(
            [this](list_completion h, std::string q, std::chrono::milliseconds t) {
                list_schedules_(std::move(q), t, std::move(h));
            },
            with_diag, std::move(queue), timeout);
    }

    // ---- broker-side delays to any queue (docs/cascades.md) --------------

    /// Delivers `msg` to `exchange` with `routing_key` (any exchange type,
    /// the default exchange too) after `delay`, through the delay cascade
    /// declared on the broker (tarry/parking/delay_cascade.hpp), so any
    /// consumer receives it then: pika, Celery, another language. The
    /// message is published exactly as given (no schedule headers; a
    /// persistent delivery_mode per the options) but without x-death, so a
    /// retried message is never dropped as a dead-letter cycle. Completes →
    /// void(std::error_code) once the broker confirmed it into the cascade;
    /// it arrives after `delay` rounded up to whole units of the cascade
    /// (never early; later by each hop's dead-lettering, about a
    /// millisecond). A delay of 0 or less publishes straight to the
    /// destination. On first use the publisher reads the cascade's
    /// descriptor (publisher_options::delay_cascade_prefix) unless the
    /// options give its spec, checks that the destination exists (the
    /// queue, for the default exchange; else the exchange) and declares its
    /// delivery queue (once per destination). A missing destination fails
    /// with unroutable and nothing is sent: the broker would drop what the
    /// cascade delivers to it (a binding removed later, or a queue deleted
    /// while messages wait, still loses them). Refused before sending:
    /// delay_exceeds_max (above the cascade's longest delay),
    /// amqp::errc::invalid_argument for a message with an expiration (it
    /// would cut the wait short). Fails with std::errc::no_message_available
    /// when no cascade was declared under the prefix (its descriptor queue
    /// is empty) or the broker's 404 when its queue is missing.
    template <class Token>
    auto async_publish_delayed(std::string exchange, std::string routing_key, amqp::message msg,
                               std::chrono::milliseconds delay, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](completion h, std::string x, std::string k, amqp::message m, std::chrono::milliseconds d) {
                publish_delayed_(std::move(x), std::move(k), std::move(m), d, std::move(h));
            },
            token, std::move(exchange), std::move(routing_key), std::move(msg), delay);
    }
    /// The same, with this publish's diagnostics in `diag`.
    template <class Token>
    auto async_publish_delayed(std::string exchange, std::string routing_key, amqp::message msg,
                               std::chrono::milliseconds delay, amqp::diagnostics& diag, Token&& token) {
        return async_publish_delayed(std::move(exchange), std::move(routing_key), std::move(msg), delay,
                                     amqp::detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Thread-safe.
    publisher_stats stats() const noexcept;
    /// The latest failure of any publish, as its diagnostics said. Empty
    /// code until a publish fails. Thread-safe; a snapshot for logs only:
    /// publishes in flight at once may replace it at any time, so it is not
    /// how to learn why a publish failed: give that publish a
    /// `diagnostics&` (the overloads above).
    amqp::diagnostics last_error() const;

private:
    struct state;
    /// What each publish runs with (see tarry/amqp/completion.hpp).
    using completion = amqp::detail::op_handler<>;
    void publish_(std::string exchange, std::string routing_key, amqp::message msg,
                  const job_schedule* when, completion h);
    void cancel_(std::string queue, std::string job_id, completion h);
    void reschedule_(std::string queue, std::string job_id, job_schedule when, amqp::message msg,
                     completion h);
    using list_completion = amqp::detail::op_handler<std::vector<control::schedule_upsert>>;
    void upsert_schedule_(std::string queue, std::string schedule_id, periodic::schedule_spec spec, amqp::message msg,
                          completion h);
    void remove_schedule_(std::string queue, std::string schedule_id, completion h);
    void list_schedules_(std::string queue, std::chrono::milliseconds timeout, list_completion h);
    void publish_delayed_(std::string exchange, std::string routing_key, amqp::message msg,
                          std::chrono::milliseconds delay, completion h);

    std::shared_ptr<state> s_;
};

}  // namespace tarry
