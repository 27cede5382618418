// One HTTP connection to the endpoint: reads requests (within the size and
// time limits), answers each on its route, and keeps the connection open
// while the client wants it. Lives on the endpoint's strand.
#pragma once

#include "endpoint_impl.hpp"
#include "http_error.hpp"
#include "http_routes.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <memory>
#include <optional>
#include <string>

namespace tarry::http_detail {

class http_session : public std::enable_shared_from_this<http_session> {
public:
    http_session(boost::asio::ip::tcp::socket socket, std::shared_ptr<http_endpoint::impl> endpoint);
    ~http_session();
    void start();
    /// Cuts the connection (stop()).
    void close();

private:
    using request = boost::beast::http::request<boost::beast::http::string_body>;
    using response = boost::beast::http::response<boost::beast::http::string_body>;

    void read_header();
    void read_body();
    void handle();
    void respond(unsigned status, const char* content_type, std::string body, bool close_after = false);
    void respond_error(const http_error& e, bool close_after = false);
    /// Answers or closes after a failed read; false when ec is no failure.
    bool read_failed(boost::beast::error_code ec);
    void written(bool close_after);

    // Routes that answer later.
    void answer_healthz();
    void answer_jobs(const std::string& query);
    void answer_publish();
    /// DELETE (cancel) or PUT (reschedule) of one job.
    void answer_job_command(const route& r);
    /// The gateway when the request may publish; else nothing, the refusal
    /// answered (401, 403, 503).
    publish_gateway* authorized_gateway();
    gateway_limits limits() const;
    void answer_status_page();

    std::shared_ptr<http_endpoint::impl> endpoint_;
    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    std::optional<response> response_;
    bool head_ = false;        // the request was HEAD: no body in the answer
    bool keep_alive_ = false;  // the client wants the connection kept
};

}  // namespace tarry::http_detail
