// The endpoint's state, shared by its sessions: see http_endpoint.cpp.
#pragma once

#include "mailbox.hpp"
#include "parked_counts.hpp"
#include "publish_gateway.hpp"
#include "status_page.hpp"

#include "tarry/http/http_endpoint.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

namespace tarry {

namespace http_detail {
class http_session;
}

class http_endpoint::impl : public std::enable_shared_from_this<http_endpoint::impl> {
public:
    impl(boost::asio::any_io_executor executor, consumer& c, amqp::connection* gateway,
         http_endpoint_options options);

    void start();
    void stop();
    boost::asio::ip::tcp::endpoint local_endpoint() const { return bound_; }

    // ---- for sessions (on the strand) -----------------------------------------
    consumer& served() noexcept { return consumer_; }
    const http_endpoint_options& options() const noexcept { return options_; }
    http_detail::endpoint_strand& strand() noexcept { return strand_; }
    http_detail::parked_counts& parked() noexcept { return *parked_; }
    /// Null without a gateway connection.
    http_detail::publish_gateway* gateway() noexcept { return gateway_ ? &*gateway_ : nullptr; }
    const http_detail::status_history& history() const noexcept { return history_; }
    /// Calls done(true) once the consumer's I/O executor answered, or
    /// done(false) after `patience`.
    void ping_consumer(std::chrono::milliseconds patience, std::function<void(bool)> done);
    void session_ended();
    bool stopped() const noexcept { return stopped_; }

private:
    void accept();
    void sample_history();
    void close_all();

    std::unique_ptr<boost::asio::io_context> own_context_;  // the first constructor's
    std::thread own_thread_;
    http_detail::endpoint_strand strand_;
    consumer& consumer_;
    http_endpoint_options options_;
    boost::asio::ip::tcp::endpoint wanted_, bound_;
    std::shared_ptr<http_detail::mailbox> box_;
    std::shared_ptr<http_detail::parked_counts> parked_;
    std::optional<http_detail::publish_gateway> gateway_;
    http_detail::status_history history_;
    boost::asio::ip::tcp::acceptor acceptor_;
    boost::asio::steady_timer history_timer_;
    std::vector<std::weak_ptr<http_detail::http_session>> sessions_;
    std::size_t open_sessions_ = 0;
    bool accepting_ = false;   // an async_accept is out
    bool started_ = false;
    bool stopped_ = false;
};

}  // namespace tarry
