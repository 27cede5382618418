// The publish gateway's sending half: publishes a request's messages to the
// consumer's queue through tarry::publisher (confirms), and answers with
// what came of each one once every publish completed or the request's time
// ran out. Lives on the endpoint's strand: every member is called there.
#pragma once

#include "gateway_json.hpp"
#include "mailbox.hpp"

#include "tarry/amqp/connection.hpp"
#include "tarry/publisher/publisher.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tarry::http_detail {

struct request_state;

class publish_gateway {
public:
    using answer = std::function<void(std::vector<publish_result>)>;

    /// Publishes to `queue` (through the default exchange) over `conn`;
    /// `default_delay` for a message without one; `max_delay` as the
    /// consumer's (refused before sending).
    publish_gateway(amqp::connection& conn, std::string queue, std::chrono::milliseconds default_delay,
                    std::optional<std::chrono::milliseconds> max_delay, std::shared_ptr<mailbox> box,
                    endpoint_strand strand);

    /// Whether the gateway's connection is open now (else: 503, nothing sent).
    bool available() const noexcept { return conn_.is_open(); }

    /// Publishes every message, then calls `done` with a result per message
    /// in order: confirmed, refused (the error), or not confirmed within
    /// `timeout` (std::errc::timed_out: it may still arrive).
    void publish(std::vector<gateway_message> messages, std::chrono::milliseconds timeout, answer done);
    /// publisher::async_cancel of `job_id` in the queue; `done` with one
    /// result, as for publish().
    void cancel(std::string job_id, std::chrono::milliseconds timeout, answer done);
    /// publisher::async_reschedule of `m` (its id set: the job id) in the
    /// queue; `done` with one result, as for publish().
    void reschedule(gateway_message m, std::chrono::milliseconds timeout, answer done);

private:
    /// The state of a request of `operations` publishes, its timer started.
    std::shared_ptr<request_state> start(std::size_t operations, std::chrono::milliseconds timeout, answer done);
    job_schedule schedule_of(const gateway_message& m) const;
    /// What operation `i` of `state` completes with.
    static std::function<void(std::error_code)> completion_of(const std::shared_ptr<request_state>& state,
                                                              std::size_t i);

    amqp::connection& conn_;
    std::string queue_;
    std::chrono::milliseconds default_delay_;
    publisher publisher_;
    std::shared_ptr<mailbox> box_;
    endpoint_strand strand_;
};

/// A message id for a message sent without one: a random (version 4) UUID.
std::string new_message_id();

}  // namespace tarry::http_detail
