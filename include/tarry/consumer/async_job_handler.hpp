// Asynchronous handlers: a job run as a C++20 coroutine (or any Asio
// asynchronous operation) on an executor, instead of on a worker thread.
//
// Promises (beside the consumer's own, which hold for these handlers too):
// - At most subscription_options::max_in_flight of them run at once; that
//   number stands for the workers' capacity wherever the thread count does
//   for synchronous handlers (the due backlog bound, prefetch).
// - The job view passed to the handler stays valid until the coroutine
//   completes (or, abandoned at stop(), until its frame is destroyed).
// - A handler that throws, or whose coroutine ends with an exception,
//   failed, as a synchronous handler that throws (permanent_error: rejected).
// - Cancellation: only at stop(). A coroutine still running when
//   shutdown_grace ends is abandoned (event `abandoned`, not acknowledged;
//   its outcome is discarded) and receives a `terminal` cancellation through
//   Asio's per-operation cancellation. One that goes on regardless is never
//   resumed after stop() has returned: its frame is destroyed when it would
//   next resume.
//
// Threads: the handler is called, and its coroutine runs, on the handler
// executor (by default the consumer's own I/O executor; with a
// multi-threaded io_context give a strand). It must not block that
// executor. It may await anything (timers, sockets, Boost.Beast, other
// coroutines); the cancellation is delivered on the handler executor.
#pragma once

#include "tarry/consumer/job.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <functional>
#include <utility>

namespace tarry {

/// Runs one job as a coroutine. Throwing (before or after the first
/// suspension) is a failure, as job_outcome::failure(what()).
using async_job_handler = std::function<boost::asio::awaitable<job_outcome>(const job&)>;

/// An async_job_handler from an Asio asynchronous operation, for code
/// without coroutines: `op(const job&, token)` initiates an operation with
/// completion signature void(job_outcome) (or void(error_code, job_outcome):
/// an error is a failure). The operation's associated cancellation slot
/// receives the terminal cancellation at stop().
template <class Operation>
async_job_handler from_async_operation(Operation op) {
    return [op = std::move(op)](const job& j) -> boost::asio::awaitable<job_outcome> {
        co_return co_await op(j, boost::asio::use_awaitable);
    };
}

}  // namespace tarry
