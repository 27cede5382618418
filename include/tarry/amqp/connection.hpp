// An AMQP 0-9-1 connection to RabbitMQ over Boost.Asio (TCP or TLS).
//
// Threading contract:
//  - The connection runs on the executor given at construction (through a
//    strand of it): that "I/O thread" alone touches the socket, the timers
//    and every channel's state. Run its io_context on one thread, or on
//    several (the strand keeps it serial).
//  - Every public member function may be called from any thread. async_*
//    operations are posted to the I/O thread; their completion handlers
//    run through the handler's associated executor (by default the I/O
//    thread) and are never invoked from inside the starting call.
//  - Hooks (connection_hooks), consumer handlers and return/close
//    handlers run on the I/O thread; they must not block it.
//
// Life cycle: async_connect makes one attempt (resolve, TCP, TLS, AMQP
// handshake, bounded by connection_timeout) per broker address, in order,
// until one opens (connection_config::failover), and reports the outcome. Once
// open, a lost connection (socket error, missed heartbeats, broker close)
// fails every pending operation with a clear error, then — when
// config.reconnect is set — is rebuilt with the config's backoff (jitter
// included; every refused_reconnect_interval while the broker refuses
// connections); hooks.on_open runs after every successful (re)connect and is
// the place to re-declare topology and re-subscribe, since channels do not
// survive a reconnect. async_close ends it for good.
//
// The connection object owns the connection: destroying it closes it
// (without waiting). Channel handles may outlive it; their operations then
// fail. Move-only.
#pragma once

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection_config.hpp"
#include "tarry/amqp/error.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tarry::amqp {

namespace detail {
class connection_impl;
}

/// What the broker and we settled on at the last successful handshake.
struct connection_info {
    std::uint16_t channel_max = 0;  ///< highest channel number
    std::uint32_t frame_max = 0;    ///< largest frame, in bytes, header and end octet included
    std::uint16_t heartbeat = 0;  ///< seconds; 0 = off
    field_table server_properties;  ///< product, version, capabilities, ...
    std::uint64_t connects = 0;     ///< successful handshakes so far (1 = first)
};

/// Callbacks for the connection's life. All optional; all called on the
/// I/O thread; set at construction.
struct connection_hooks {
    /// After every successful handshake (the first one and each reconnect):
    /// open channels, declare topology and start consumers here.
    std::function<void(const connection_info&)> on_open;
    /// An open connection was lost (before any reconnect attempt).
    std::function<void(const diagnostics&)> on_lost;
    /// A reconnect attempt is scheduled after `delay` (attempt counts from 1).
    std::function<void(unsigned attempt, std::chrono::milliseconds delay, const diagnostics&)>
        on_reconnect_scheduled;
    /// The connection is over for good: closed by us, first connect failed,
    /// reconnect disabled or its policy gave up.
    std::function<void(const diagnostics&)> on_closed;
    /// connection.blocked (the broker stopped reading publishes: memory or
    /// disk alarm) and connection.unblocked.
    ///@{
    std::function<void(const std::string& reason)> on_blocked;
    std::function<void()> on_unblocked;
    ///@}
};

/// Counters for metrics. A snapshot; thread-safe.
struct connection_usage {
    std::uint64_t bytes_sent = 0;      ///< handed to the socket, every connection counted
    std::uint64_t bytes_received = 0;  ///< read from the socket, every connection counted
    std::uint64_t connects = 0;         ///< successful handshakes
    std::uint64_t failed_attempts = 0;  ///< attempts that did not reach open
    std::uint64_t connections_lost = 0; ///< open connections that ended without our close
};

/// An AMQP 0-9-1 connection that reconnects by itself (see this header's
/// opening comment for its threads and life cycle). Every member may be
/// called from any thread; it owns the connection. Move-only.
class connection {
public:
    /// The executor given at construction.
    using executor_type = boost::asio::any_io_executor;

    /// Runs on `ex` (through a strand of it) with `config` and `hooks`;
    /// connects nothing yet (async_connect does).
    connection(executor_type ex, connection_config config, connection_hooks hooks = {});
    /// Closes the connection without waiting; its channels' operations fail.
    ~connection();
    /// Takes over the other's connection; the moved-from object may then
    /// only be destroyed or assigned to.
    connection(connection&&) noexcept;
    /// Closes this one's connection (as the destructor does), then takes
    /// over the other's.
    connection& operator=(connection&&) noexcept;
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;

    /// The executor given at construction.
    executor_type get_executor() const noexcept;
    /// The configuration given at construction.
    const connection_config& config() const noexcept;

    /// Connects → void(error_code). One attempt per address (no retry);
    /// when all fail, the last one's error:
    /// connect_failed, connect_timeout, tls_handshake_failed,
    /// authentication_failed, vhost_access_refused, protocol_version_refused,
    /// ... Completes at once with success when already open.
    template <class Token>
    auto async_connect(Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [impl = impl_](completion<> h) { connect_(impl, std::move(h)); }, token);
    }
    /// The same, with this attempt's diagnostics in `diag`: what failed
    /// ("connect: cannot connect to host:5672: Connection refused", ...) and,
    /// when the broker closed the connection (bad credentials, unknown
    /// vhost), its reply. Keep `diag` alive, untouched, until the handler
    /// runs (channel.hpp says how diagnostics work).
    template <class Token>
    auto async_connect(diagnostics& diag, Token&& token) {
        return async_connect(detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Closes cleanly (connection.close, bounded by close_timeout) and stops
    /// reconnecting → void(error_code). Pending operations fail with
    /// errc::connection_closed. Succeeds when already closed.
    template <class Token>
    auto async_close(Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [impl = impl_](completion<> h) { close_(impl, std::move(h)); }, token);
    }
    /// The same, with this operation's diagnostics in `diag` (cleared: the
    /// close always succeeds).
    template <class Token>
    auto async_close(diagnostics& diag, Token&& token) {
        return async_close(detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Opens a channel → void(error_code, channel). not_connected when the
    /// connection is not open (e.g. between reconnects).
    template <class Token>
    auto async_open_channel(Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code, channel)>(
            [impl = impl_](completion<channel> h) { open_channel_(impl, std::move(h)); }, token);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_open_channel(diagnostics& diag, Token&& token) {
        return async_open_channel(detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Waits until the broker is not blocking publishes → void(error_code).
    /// Completes at once when not blocked; with not_connected / the
    /// connection's error if it ends first. Publishers call it before
    /// publishing instead of piling messages up in memory.
    template <class Token>
    auto async_wait_unblocked(Token&& token) {
        return boost::asio::async_initiate<Token, void(std::error_code)>(
            [impl = impl_](completion<> h) { wait_unblocked_(impl, std::move(h)); }, token);
    }
    /// The same, with this operation's diagnostics in `diag`.
    template <class Token>
    auto async_wait_unblocked(diagnostics& diag, Token&& token) {
        return async_wait_unblocked(detail::with_diagnostics(diag, std::forward<Token>(token)));
    }

    /// Whether the connection is open now (a snapshot, thread-safe).
    bool is_open() const noexcept;
    /// Whether the broker blocks its publishes now (connection.blocked; a
    /// snapshot, thread-safe).
    bool blocked() const noexcept;
    /// Why the latest connection attempt or connection ended (empty code
    /// while all is well). A snapshot for logs only: a reconnect attempt may
    /// replace it at any time, so it is not how to learn why an operation
    /// failed: give that operation a `diagnostics&` (the overloads above).
    diagnostics last_error() const;
    /// The settled limits of the open connection (nothing when not open).
    std::optional<connection_info> info() const;
    /// Counters since construction (a snapshot, thread-safe).
    connection_usage usage() const noexcept;

private:
    using impl_ptr = std::shared_ptr<detail::connection_impl>;
    /// What each operation runs with (see completion.hpp).
    template <class... Args>
    using completion = detail::op_handler<Args...>;

    static void connect_(const impl_ptr& impl, completion<> h);
    static void close_(const impl_ptr& impl, completion<> h);
    static void open_channel_(const impl_ptr& impl, completion<channel> h);
    static void wait_unblocked_(const impl_ptr& impl, completion<> h);

    impl_ptr impl_;
};

}  // namespace tarry::amqp
