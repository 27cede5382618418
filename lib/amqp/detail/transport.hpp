// The byte stream under one AMQP connection: a TCP socket, or TLS over one.
// I/O thread only.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include <optional>
#include <string>

namespace tarry::amqp::detail {

class transport {
public:
    /// Plain TCP when `tls` is null; otherwise TLS with that context (which
    /// must outlive the transport).
    transport(const boost::asio::any_io_executor& ex, boost::asio::ssl::context* tls) {
        if (tls) {
            tls_.emplace(ex, *tls);
        } else {
            plain_.emplace(ex);
        }
    }

    bool is_tls() const noexcept { return tls_.has_value(); }
    boost::asio::ip::tcp::socket& tcp() noexcept {
        return tls_ ? tls_->next_layer() : *plain_;
    }

    /// Sets SNI and, when `verify`, peer and host-name verification, then
    /// runs the client handshake. Errors reach `h` as they come (OpenSSL's
    /// reason, e.g. "certificate verify failed").
    template <class Handler>
    void async_tls_handshake(const std::string& server_name, bool verify, Handler&& h) {
        namespace ssl = boost::asio::ssl;
        SSL_set_tlsext_host_name(tls_->native_handle(), server_name.c_str());
        if (verify) {
            tls_->set_verify_mode(ssl::verify_peer);
            tls_->set_verify_callback(ssl::host_name_verification(server_name));
        } else {
            tls_->set_verify_mode(ssl::verify_none);
        }
        tls_->async_handshake(ssl::stream_base::client, std::forward<Handler>(h));
    }

    template <class Buffers, class Handler>
    void async_read_some(const Buffers& b, Handler&& h) {
        if (tls_) {
            tls_->async_read_some(b, std::forward<Handler>(h));
        } else {
            plain_->async_read_some(b, std::forward<Handler>(h));
        }
    }

    /// Writes all of `b`.
    template <class Buffers, class Handler>
    void async_write(const Buffers& b, Handler&& h) {
        if (tls_) {
            boost::asio::async_write(*tls_, b, std::forward<Handler>(h));
        } else {
            boost::asio::async_write(*plain_, b, std::forward<Handler>(h));
        }
    }

    /// Closes the socket at once (no TLS close_notify: the AMQP close
    /// handshake already said goodbye). Pending operations end with
    /// operation_aborted.
    void close() noexcept {
        boost::system::error_code ignored;
        tcp().shutdown(boost::asio::ip::tcp::socket::shutdown_both, ignored);
        tcp().close(ignored);
    }

private:
    std::optional<boost::asio::ip::tcp::socket> plain_;
    std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>> tls_;
};

}  // namespace tarry::amqp::detail
