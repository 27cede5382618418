// What a handler sees of a job, and what it answers.
#pragma once

#include "tarry/amqp/message.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tarry::control {
class tombstone_table;
}

namespace tarry {

/// A job as handed to the handler: a read-only view, valid only during the
/// handler call, on the worker thread that runs it (for an asynchronous
/// handler: until its coroutine completes).
struct job {
    const amqp::message& message;          ///< body and all properties, as delivered
    wall_time due;                         ///< when it was due (it never starts before)
    wall_time started;                     ///< when the handler was called
    std::uint32_t attempt;                 ///< 1 for the first run (x-tarry-attempt)
    bool redelivered;                      ///< the broker delivered it before
    std::uint64_t generation = 0;          ///< x-tarry-generation (0 when it has none)
    /// Where cancel_requested() looks; set by the consumer (nothing: never).
    const control::tombstone_table* tombstones = nullptr;

    /// The body as text: a view into the message.
    std::string_view body() const noexcept { return message.body_view(); }
    /// Every property, as delivered.
    const amqp::basic_properties& properties() const noexcept { return message.properties; }
    /// The application headers (an empty table when there are none).
    const amqp::field_table& headers() const noexcept;
    /// The message_id property, or "" when unset.
    std::string_view id() const noexcept;
    /// started − due (never negative).
    std::chrono::nanoseconds lateness() const noexcept { return started - due; }
    /// Whether a cancel of this job (a tombstone covering this copy:
    /// publisher::async_cancel, or a reschedule) has been read. A job is
    /// never interrupted; a long handler may check this and stop early. If
    /// it then fails, it is not retried (event `cancelled`); a success
    /// stands (its `succeeded` event says cancel_requested). Thread-safe.
    bool cancel_requested() const;
};

/// Thrown by a handler (or derived from) for a failure that retrying cannot
/// fix, such as invalid input: the job is dead-lettered `rejected: <what()>`
/// at once instead of being retried.
class permanent_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// What a handler answers. Returning normally with success() acknowledges
/// the job; throwing any exception counts as failure(what()).
class job_outcome {
public:
    /// Which answer.
    enum class kind {
        success,  ///< done: acknowledged
        failure,  ///< failed: retried per the subscription's policy, else dead-lettered
        reject,   ///< never retry: dead-lettered now (`rejected: <reason>`)
        requeue,  ///< give it back to the queue now (nack with requeue)
    };
    /// Done: the job is acknowledged.
    static job_outcome success() { return {kind::success, {}, {}}; }
    /// Failed with `error`: retried per the subscription's policy, else
    /// dead-lettered. `delay`, when given, replaces the policy's delay for
    /// this retry.
    static job_outcome failure(std::string error,
                               std::optional<std::chrono::milliseconds> delay = {}) {
        return {kind::failure, std::move(error), delay};
    }
    /// Never retry: dead-lettered now, `rejected: <reason>`.
    static job_outcome reject(std::string reason) { return {kind::reject, std::move(reason), {}}; }
    /// Give it back to the queue now (nack with requeue).
    static job_outcome requeue() { return {kind::requeue, {}, {}}; }

    /// Which answer it is.
    kind what() const noexcept { return kind_; }
    /// failure()'s error or reject()'s reason; empty for the others.
    const std::string& error() const noexcept { return error_; }
    /// failure()'s own retry delay, when it was given one.
    std::optional<std::chrono::milliseconds> delay() const noexcept { return delay_; }

private:
    job_outcome(kind k, std::string e, std::optional<std::chrono::milliseconds> d)
        : kind_(k), error_(std::move(e)), delay_(d) {}
    kind kind_;
    std::string error_;
    std::optional<std::chrono::milliseconds> delay_;
};

}  // namespace tarry
