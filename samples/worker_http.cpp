// echo_worker's HTTP endpoint: see worker_http.hpp.
#include "worker_http.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/use_future.hpp>

#include <sstream>

namespace sample {

std::optional<tarry::http_endpoint_options> http_options(cli::args& args) {
    const bool token = args.has("--http-token"), token_file = args.has("--http-token-file");
    if (!args.has("--http")) {
        if (token || token_file) args.fail("--http-token and --http-token-file need --http");
        return std::nullopt;
    }
    if (token && token_file) args.fail("give one of --http-token and --http-token-file, not both");
    tarry::http_endpoint_options o;
    const std::string where = args.required("--http");
    const auto colon = where.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == where.size())
        args.fail("--http needs HOST:PORT (e.g. 127.0.0.1:9464), not '" + where + "'");
    o.host = where.substr(0, colon);
    if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') o.host = o.host.substr(1, o.host.size() - 2);
    boost::system::error_code bad;
    boost::asio::ip::make_address(o.host, bad);
    if (bad) args.fail("--http: the host is an IP address (e.g. 127.0.0.1 or [::1]), not '" + o.host + "'");
    const std::string port = where.substr(colon + 1);
    if (port.find_first_not_of("0123456789") != std::string::npos || port.size() > 5 || std::stoul(port) > 65535)
        args.fail("--http: the port is 0..65535, not '" + port + "'");
    o.port = static_cast<std::uint16_t>(std::stoul(port));
    if (token) o.token = args.required("--http-token");
    if (token_file) o.token = args.file_text("--http-token-file");
    if (o.token && o.token->empty()) args.fail("the HTTP token is empty");
    return o;
}

namespace {
tarry::amqp::connection_config gateway_config(tarry::amqp::connection_config c) {
    c.connection_name = (c.connection_name.empty() ? std::string("echo_worker") : c.connection_name) + " (gateway)";
    return c;
}
}  // namespace

worker_http::worker_http(tarry::consumer& worker, tarry::amqp::connection_config config,
                         tarry::http_endpoint_options options)
    : gateway_(context_.get_executor(), gateway_config(std::move(config))),
      endpoint_(context_.get_executor(), worker, &gateway_, std::move(options)) {}

void worker_http::start() {
    thread_ = std::thread([this] {
        auto guard = boost::asio::make_work_guard(context_);
        context_.run();
    });
    auto connected = gateway_.async_connect(boost::asio::use_future);
    connected.get();  // throws the connection's error
    endpoint_.start();
}

std::string worker_http::address() const {
    std::ostringstream s;
    s << endpoint_.local_endpoint();
    return s.str();
}

worker_http::~worker_http() {
    if (thread_.joinable()) {
        endpoint_.stop();
        auto closed = gateway_.async_close(boost::asio::use_future);
        closed.wait();
        context_.stop();
        thread_.join();
    }
}

}  // namespace sample
