// The scheduling consumer: takes deliveries from a queue, holds each one
// unacknowledged until its due time, and runs it then: on a worker thread
// (a job_handler), or as a coroutine on an executor (an async_job_handler,
// tarry/consumer/async_job_handler.hpp; one consumer runs one kind).
//
// Promises:
// - Never early: a handler starts at or after the job's due time, read
//   per the wire contract (tarry/contract/schedule_headers.hpp).
// - Nothing lost: a delivery is acknowledged only after its handler
//   succeeded, or after the copy that replaces it (parked, retried or
//   dead-lettered) was confirmed by the broker. Crashes can duplicate a job
//   (at-least-once); handlers must be idempotent.
// - No head-of-line blocking: jobs due now bypass the delay queue; a job due
//   soon is never kept out by jobs due later (when the bounds are reached,
//   the job due last is parked; prefetch leaves room beyond the bounds).
// - Bad input (an unreadable or out-of-range schedule, a delay above
//   max_delay, an expiration before the due time) is never run: it is
//   dead-lettered with an x-tarry-reason header, and consuming goes on.
//   So is a message that cannot be read or copied at all (properties that
//   do not decode, a body over max_body_size, a copy whose properties would
//   not fit the frame_max): reason "unreadable: ...", and the connection is
//   not affected (docs/consumer.md, "Unreadable messages").
// - Never early by either clock: a job the wall clock says is not due yet
//   when a worker takes it (the clock stepped back) is held again, or
//   parked when the step pushed it beyond the hold horizon.
// - No delivery left unacknowledged past the broker's consumer_timeout:
//   jobs due later than the hold horizon are parked in broker wait queues
//   and re-held when they come back, and a due job that has not started
//   backlog_margin() before the timeout is given back (requeued, reason
//   backlog). A handler that itself runs longer cannot be saved (see
//   docs/consumer.md).
// - No job run twice through our own bookkeeping: a lost channel or
//   connection drops every job held from it at once (the broker redelivers
//   them), and an outcome that arrives after its delivery's channel was
//   lost publishes nothing and acks nothing (event dropped). A refused or
//   unconfirmed copy is published again; the handler is not run again for
//   it. Then the consumer reconnects and resubscribes.
// - One chain per periodic schedule (docs/periodic.md): an occurrence that
//   ran publishes its successor, confirmed, before it is settled; of two
//   copies of one occurrence (a crash between that confirm and the ack)
//   only the one whose run claim the queue's control stream holds first
//   runs, the other is acked unrun (event deduplicated). An occurrence
//   whose worker died mid-run or before its ack runs again (at least once).
//
// - Lifecycle events (subscription_options::publish_events; off by
//   default) are best effort and never in a job's way: dropped and counted
//   when the broker pushes back (docs/events.md).
//
// Threads: the consumer's I/O runs on one executor: a thread of its own
// (the first constructor), or an executor you give (the second; you run its
// io_context, and a publisher or other consumers may share it). All its AMQP
// work happens there, in sequence: on a strand of it, so any number of
// threads may run that io_context. `workers` threads run synchronous
// handlers; asynchronous ones run on their handler executor (and, with
// publish_events, one thread publishes the lifecycle events). The
// handler and the hooks are called concurrently from several threads. The
// blocking start(), stop() and the destructor wait on the executor: call
// them from any thread but the executor's own and the workers' (on the
// executor, use async_run() and async_stop()); stats(), metrics(), health(),
// held_jobs(), wait_queues() and async_ping() from any thread.
#pragma once

#include "tarry/amqp/connection_config.hpp"
#include "tarry/amqp/error.hpp"
#include "tarry/consumer/async_job_handler.hpp"
#include "tarry/consumer/connection_event.hpp"
#include "tarry/consumer/consumer_metrics.hpp"
#include "tarry/consumer/job.hpp"
#include "tarry/consumer/job_event.hpp"
#include "tarry/consumer/subscription_options.hpp"

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace tarry {

/// Runs one job; called on a worker thread. Throwing is a failure.
using job_handler = std::function<job_outcome(const job&)>;

/// Optional observers, called from the I/O executor and worker threads
/// (concurrently): keep them quick and thread-safe. An exception one throws
/// is never fatal: it is counted (consumer_stats::hook_exceptions,
/// tarry_hook_exceptions_total) and told to on_connection as a line (one
/// that on_connection throws is counted only), and the consumer goes on.
struct consumer_hooks {
    /// Every job event, of every kind, as it happens.
    std::function<void(const job_event&)> on_event;
    /// The connections' state as typed events.
    std::function<void(const connection_event&)> on_connection_event;
    /// The same events as log lines (connection_event::text(): "connected",
    /// "lost: ...", "reconnecting in 200 ms (attempt 1)", "copies connection
    /// blocked by the broker: low on memory", ...): the consumer's log sink.
    std::function<void(const std::string&)> on_connection;
};

/// The scheduling consumer: holds each delivery unacknowledged until it is
/// due, then runs it; never early, nothing lost, at least once (see this
/// header's opening comment for every promise and its threads).
class consumer {
public:
    /// Nothing happens until start(). Throws tarry::error (code
    /// std::errc::invalid_argument) when validate(options) finds a problem,
    /// or the handler is empty.
    consumer(amqp::connection_config config, subscription_options options, job_handler handler,
             consumer_hooks hooks = {});
    /// The same, running its I/O on `executor` (no I/O thread of its own).
    /// The executor must stay valid, and its io_context run, until the
    /// consumer has stopped.
    consumer(boost::asio::any_io_executor executor, amqp::connection_config config,
             subscription_options options, job_handler handler, consumer_hooks hooks = {});
    /// With an asynchronous handler: each job's coroutine runs on
    /// `handler_executor` (empty: the consumer's I/O executor), at most
    /// options.max_in_flight at once, and no worker thread is started;
    /// options.handlers becomes handler_kind::coroutines. Throws as above
    /// (the handler empty, max_in_flight 0).
    consumer(amqp::connection_config config, subscription_options options, async_job_handler handler,
             consumer_hooks hooks = {}, boost::asio::any_io_executor handler_executor = {});
    /// The same, running its I/O on `executor`.
    consumer(boost::asio::any_io_executor executor, amqp::connection_config config,
             subscription_options options, async_job_handler handler, consumer_hooks hooks = {},
             boost::asio::any_io_executor handler_executor = {});
    /// stop(), if still running.
    ~consumer();
    consumer(const consumer&) = delete;
    consumer& operator=(const consumer&) = delete;

    /// Opens two connections to `config`'s broker (one consumes and
    /// settles, one publishes the copies that replace deliveries: parked,
    /// retried, dead-lettered; its connection_name gets " (copies)"),
    /// declares the work, wait and dead-letter queues (and, with
    /// publish_events, the events exchange, whose events go out on a
    /// channel of the copies connection), subscribes
    /// and starts the workers; returns once deliveries can flow. Throws
    /// tarry::error (a std::system_error): code() says what failed
    /// (amqp::errc::authentication_failed, the broker's 404 for a missing
    /// queue, ...), diagnostics() carries the broker's reply, what() says
    /// where; then nothing keeps running. A connection lost after the
    /// first connect, while it declares and subscribes (a node failing),
    /// is no refusal: it reconnects as configured and start() returns once
    /// consuming (stop() from another thread ends the wait). Call start()
    /// or async_run() once.
    void start();

    /// Starts as start() does, without blocking, and completes once the
    /// consumer has stopped (after stop() or async_stop(): success), or
    /// with the error_code that kept it from starting (then nothing keeps
    /// running). Signature: void(std::error_code).
    template <class Token>
    auto async_run(Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this](auto handler) { run_erased(std::move(handler), nullptr); }, token);
    }
    /// The same; `diag` receives, before completion, what kept it from
    /// starting (the message, and the broker's reply when it refused), or
    /// is cleared when it ran and stopped. `diag` must outlive the
    /// operation.
    template <class Token>
    auto async_run(amqp::diagnostics& diag, Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [this, &diag](auto handler) { run_erased(std::move(handler), &diag); }, token);
    }

    /// Stops as stop() does, without blocking the caller: completes once
    /// stopped (within shutdown_grace + close_timeout). Signature: void().
    template <class Token>
    auto async_stop(Token&& token) {
        return boost::asio::async_initiate<Token, void()>(
            [this](auto handler) { stop_erased(std::move(handler)); }, token);
    }

    /// Graceful shutdown, blocking: cancels the subscription, lets running
    /// jobs finish within shutdown_grace, gives every held job back to the
    /// broker (nack with requeue), waits for copies in flight within the
    /// same grace, and closes both connections within the connection's
    /// close_timeout. Returns within shutdown_grace + close_timeout: a
    /// handler still running then is abandoned (event abandoned; not
    /// acknowledged, so the broker redelivers it), and its thread is joined
    /// neither here nor by the destructor; when it returns, its outcome is
    /// discarded. A handler running past stop() may use its job view and
    /// what it captured, not the consumer. An abandoned coroutine receives a
    /// terminal cancellation, and is destroyed, not resumed, once stop() has
    /// returned. Idempotent.
    void stop();

    /// Counters and gauges; any thread, at any time (during stop() too).
    consumer_stats stats() const;
    /// The counters with the histograms, counts by reason and gauges
    /// (tarry/consumer/consumer_metrics.hpp); any thread, at any time.
    consumer_metrics metrics() const;
    /// Whether both connections are open and consuming, and why not; any
    /// thread, at any time.
    consumer_health health() const;
    /// Up to `limit` held jobs in due order, starting after `after` (a
    /// held_jobs_page::next; empty: from the earliest). Any thread; holds
    /// the delay queue's lock for O(limit + log held), never copies every
    /// held job. An `after` that is no cursor of this consumer's sets ec to
    /// std::errc::invalid_argument and returns an empty page. Jobs due at
    /// arrival and waiting for a worker come first, then the held jobs by
    /// due time. `limit` is at most held_jobs_max_limit; 0 returns no job,
    /// with `next` = `after` (docs/consumer.md, "Metrics, health and the
    /// held jobs").
    held_jobs_page held_jobs(std::size_t limit, std::string_view after, std::error_code& ec) const;
    /// The wait queues jobs are parked in, shortest TTL first; none when
    /// they are parked through a delay cascade (parking_strategy), whose
    /// queues other destinations share.
    std::vector<std::string> wait_queues() const;
    /// Completes (signature void()) once the consumer's I/O executor has run
    /// it: a probe that its I/O thread answers. Before start() and after
    /// stop() too: with the consumer's own I/O thread, which then does not
    /// run, it completes at once (never inside this call), and one queued
    /// when stop() ends that thread completes then; it never hangs. Any
    /// thread; the completion runs on the handler's associated executor.
    template <class Token>
    auto async_ping(Token&& token) {
        return boost::asio::async_initiate<Token, void()>(
            [this](auto handler) { ping_erased(std::move(handler)); }, token);
    }
    /// The options it runs with: those given, `handlers` set by the
    /// constructor.
    const subscription_options& options() const noexcept;

    class impl;

private:
    void run_erased(boost::asio::any_completion_handler<void(std::error_code)> handler, amqp::diagnostics* diag);
    void stop_erased(boost::asio::any_completion_handler<void()> handler);
    void ping_erased(boost::asio::any_completion_handler<void()> handler);

    std::shared_ptr<impl> impl_;
};

}  // namespace tarry
