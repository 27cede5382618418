// echo_worker's HTTP endpoint (--http HOST:PORT): the address and token as
// read from its command line, and the endpoint with the connection its
// publish gateway uses, on a thread of their own.
#pragma once

#include "command_args.hpp"

#include "tarry/amqp/connection.hpp"
#include "tarry/http/http_endpoint.hpp"

#include <boost/asio/io_context.hpp>

#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace sample {

/// --http HOST:PORT, --http-token TOKEN, --http-token-file PATH; empty when
/// --http is not given. Calls args.fail() (exit 2) on anything wrong.
std::optional<tarry::http_endpoint_options> http_options(cli::args& args);

/// The endpoint serving `worker`, and its gateway's connection (a third
/// one, named "... (gateway)"). start() throws tarry::error when the
/// connection or the listening socket cannot be opened.
class worker_http {
public:
    worker_http(tarry::consumer& worker, tarry::amqp::connection_config config, tarry::http_endpoint_options options);
    ~worker_http();
    void start();
    /// "HOST:PORT" it listens on (after start()).
    std::string address() const;

private:
    boost::asio::io_context context_;
    tarry::amqp::connection gateway_;
    tarry::http_endpoint endpoint_;
    std::thread thread_;
};

}  // namespace sample
