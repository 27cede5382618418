// tarry's HTTP endpoint (Boost.Beast): what a consumer is doing, for people
// and for Prometheus, and a gateway that publishes jobs to its queue.
//
//   GET  /metrics   Prometheus text format: the metrics of docs/design.md
//                   ("One vocabulary"), every series labelled with the queue
//   GET  /healthz   200 once the endpoint and the consumer's I/O thread answer
//   GET  /readyz    200 when both connections are open and consuming; 503
//                   and the reason otherwise
//   GET  /jobs?limit=N&after=CURSOR
//                   the held jobs in due order, a page at a time (JSON)
//   POST /v1/queues/{queue}/messages
//                   publishes up to 100 jobs to the consumer's queue (JSON;
//                   Authorization: Bearer TOKEN)
//   GET  /          a status page (HTML + SVG, no external assets)
// docs/http.md describes each route, its statuses and its JSON.
//
// Promises:
// - Off unless constructed; binds 127.0.0.1 unless told otherwise.
// - A publish answers 201 only when the broker confirmed every message;
//   otherwise the response says which were sent and which were not (207),
//   so a caller never has to guess (docs/http.md, "Publish").
// - Bad requests get a status and a message, never a crash: a malformed
//   request or body 400, no token 401, a wrong token (or none configured)
//   403, an unknown path or queue 404, too large 413, the broker not
//   reachable 503. Nothing a request says can make the endpoint publish
//   to another queue.
// - A scrape or a /jobs page never copies every held job.
//
// Threads: all its work runs on one executor: a thread of its own (the
// first constructor) or an executor you give (you run its io_context; it
// may be the consumer's). start() and stop() may be called from any thread
// but that executor's own; stop() (and so the destructor, after a start())
// waits for that executor: with one you give, keep its io_context running
// until stop() has returned. The consumer, and the connection the gateway
// publishes on, must outlive the endpoint.
#pragma once

#include "tarry/amqp/connection.hpp"
#include "tarry/consumer/consumer.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tarry {

/// Where the endpoint listens, its publish gateway's token, and its bounds.
/// A plain value; each field says its default.
struct http_endpoint_options {
    /// Where to listen: an address (not a name). 0 as the port: any free
    /// port (local_endpoint() tells which).
    ///@{
    std::string host = "127.0.0.1";
    std::uint16_t port = 0;
    ///@}
    /// The publish gateway's bearer token. Without one, every publish is
    /// refused (403).
    std::optional<std::string> token;
    /// Larger request headers / bodies are refused (413). Default 8 KiB /
    /// 1 MiB.
    ///@{
    std::size_t max_header_bytes = 8 * 1024;
    std::size_t max_body_bytes = 1024 * 1024;
    ///@}
    /// Messages in one publish request, at most.
    std::size_t max_messages = 100;
    /// A request must arrive whole within this, and a publish be confirmed.
    std::chrono::milliseconds request_timeout{10'000};
    /// Connections served at once; more wait to be accepted.
    std::size_t max_connections = 64;
    /// How long the parked counts (a passive queue.declare per wait queue)
    /// are reused.
    std::chrono::milliseconds parked_cache{1000};
};

/// The HTTP endpoint of one consumer: /metrics, /healthz, /readyz, the
/// held jobs (/jobs), a status page and a publish gateway; off unless
/// constructed, on one executor, the consumer and the gateway's connection
/// outliving it (see this header's opening comment for every promise).
class http_endpoint {
public:
    /// Serves `c`. The gateway publishes on `gateway` with confirms (a
    /// connection of its own is best: not the consumer's); null: no
    /// gateway, every publish answers 503, and /jobs has no parked counts.
    /// Throws tarry::error (std::errc::invalid_argument) for options that
    /// cannot work (a host that is no address, max_messages 0, ...).
    http_endpoint(consumer& c, amqp::connection* gateway, http_endpoint_options options = {});
    /// The same, on `executor` (no thread of its own).
    http_endpoint(boost::asio::any_io_executor executor, consumer& c, amqp::connection* gateway,
                  http_endpoint_options options = {});
    /// stop(), if still running.
    ~http_endpoint();
    http_endpoint(const http_endpoint&) = delete;
    http_endpoint& operator=(const http_endpoint&) = delete;

    /// Binds and listens; returns once connections are accepted. Throws
    /// tarry::error when the address cannot be bound (its code, e.g.
    /// address_in_use, and what() naming the address). Call once.
    void start();
    /// Where it listens (after start()).
    boost::asio::ip::tcp::endpoint local_endpoint() const;
    /// Stops accepting, closes every connection (a request in progress is
    /// cut), and returns once nothing of it runs. Idempotent.
    void stop();

    class impl;

private:
    std::shared_ptr<impl> impl_;
};

}  // namespace tarry
