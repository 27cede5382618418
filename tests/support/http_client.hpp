// A small HTTP/1.1 client for tests (Boost.Beast): one request per call on a
// fresh connection, bounded in time, and raw bytes for malformed requests.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace tarry_test {

struct http_reply {
    unsigned status = 0;  ///< 0: no answer (connection refused, closed or timed out)
    std::string body;
    boost::beast::http::fields headers;
    std::string error;    ///< why status is 0
    std::string header(boost::beast::http::field f) const { return std::string(headers[f]); }
};

/// Sends one request to `to` and reads the answer, within `timeout`.
inline http_reply http_request(const boost::asio::ip::tcp::endpoint& to, boost::beast::http::verb method,
                               const std::string& target, std::string body = {},
                               std::vector<std::pair<std::string, std::string>> headers = {},
                               std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    namespace http = boost::beast::http;
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    http::request<http::string_body> req(method, target, 11);
    req.set(http::field::host, "127.0.0.1");
    for (auto& [k, v] : headers) req.set(k, v);
    if (!body.empty() || method == http::verb::post) {
        req.body() = std::move(body);
        req.prepare_payload();
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    if (method == http::verb::head) parser.skip(true);
    boost::beast::flat_buffer buf;
    http_reply out;
    stream.expires_after(timeout);
    stream.async_connect(to, [&](boost::beast::error_code ec) {
        if (ec) {
            out.error = "connect: " + ec.message();
            return;
        }
        http::async_write(stream, req, [&](boost::beast::error_code ec, std::size_t) {
            if (ec) {
                out.error = "write: " + ec.message();
                return;
            }
            http::async_read(stream, buf, parser, [&](boost::beast::error_code ec, std::size_t) {
                if (ec) {
                    out.error = "read: " + ec.message();
                    return;
                }
                auto res = parser.release();
                out.status = res.result_int();
                out.body = std::move(res.body());
                out.headers = res.base();
            });
        });
    });
    io.run();
    return out;
}

inline http_reply http_get(const boost::asio::ip::tcp::endpoint& to, const std::string& target) {
    return http_request(to, boost::beast::http::verb::get, target);
}

/// Writes `bytes` as they are and returns whatever comes back until the
/// server closes the connection or `timeout` passes.
inline std::string raw_exchange(const boost::asio::ip::tcp::endpoint& to, const std::string& bytes,
                                std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    boost::asio::io_context io;
    boost::beast::tcp_stream stream(io);
    std::string got;
    std::array<char, 4096> chunk{};
    stream.expires_after(timeout);
    std::function<void()> read_more = [&] {
        stream.async_read_some(boost::asio::buffer(chunk), [&](boost::beast::error_code ec, std::size_t n) {
            got.append(chunk.data(), n);
            if (!ec) read_more();
        });
    };
    stream.async_connect(to, [&](boost::beast::error_code ec) {
        if (ec) return;
        boost::asio::async_write(stream, boost::asio::buffer(bytes), [&](boost::beast::error_code ec, std::size_t) {
            if (!ec) read_more();
        });
    });
    io.run();
    return got;
}

}  // namespace tarry_test
