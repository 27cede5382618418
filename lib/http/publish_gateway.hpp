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

private:
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
