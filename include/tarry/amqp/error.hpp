// Errors of tarry's AMQP client.
//
// Every operation reports failure as a std::error_code. Two categories:
//  - "tarry.amqp": tarry::amqp::errc, conditions the client itself detects
//    (socket lost, heartbeat missed, handshake refused, operation cancelled);
//  - "tarry.amqp.broker": the broker's reply code (reply_code, e.g. 404
//    NOT_FOUND) when the broker closed a channel or the connection.
// The broker's own words (code, text, failing method) travel apart from the
// code, in a broker_reply inside diagnostics: every asynchronous operation
// has an overload taking a `diagnostics&` that receives that operation's
// own failure (see channel.hpp). requires_reconnect() says whether the
// connection that produced a code must be rebuilt. APIs that throw throw
// tarry::error, which carries both the code and the diagnostics.
// Everything here is a plain value: thread-safe to copy and read.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace tarry::amqp {

/// Conditions tarry's client detects itself. Zero is never used.
enum class errc {
    invalid_url = 1,          ///< an AMQP URL that does not parse (diagnostics say where)
    invalid_argument,         ///< a request tarry refuses before sending (e.g. shortstr over 255 bytes)
    connect_failed,           ///< name resolution or TCP connect failed
    connect_timeout,          ///< connect + TLS + AMQP handshake took longer than connection_timeout
    tls_handshake_failed,     ///< TLS handshake failed (e.g. certificate not verified, not a TLS port)
    protocol_version_refused, ///< the server answered with its own protocol header
    unsupported_mechanism,    ///< the server offers no SASL mechanism tarry speaks (PLAIN)
    authentication_failed,    ///< the broker refused the user name or password
    vhost_access_refused,     ///< the virtual host does not exist or the user may not use it
    protocol_error,           ///< the peer broke AMQP framing or sequencing (diagnostics say how)
    connection_lost,          ///< the socket failed or the peer closed it without a close method
    heartbeat_timeout,        ///< nothing received for two heartbeat intervals: the peer is dead
    connection_closed,        ///< the connection was closed by this client (async_close, destruction)
    channel_closed,           ///< the channel was closed by this client, or is not open
    channel_limit_reached,    ///< every channel number up to channel_max is in use
    publish_nacked,           ///< the broker refused a publish on a confirm channel (basic.nack)
    consumer_cancelled,       ///< the broker cancelled the consumer (its queue went away)
    operation_cancelled,      ///< the caller cancelled the operation (its result is unknown)
    not_connected,            ///< no open connection (before connect, between reconnects)
    close_timeout,            ///< the peer did not answer our close within the timeout
    header_too_large,         ///< a publish whose properties do not fit one frame (frame_max): not sent
};

/// The category of errc; its name() is "tarry.amqp".
const std::error_category& amqp_category() noexcept;

/// `e` as a std::error_code of amqp_category(); found by argument-dependent
/// lookup, so an errc converts to std::error_code.
inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), amqp_category()};
}

/// The reply codes of AMQP 0-9-1 (and RabbitMQ's 312 NO_ROUTE). An error
/// code in broker_category() holds one of these values.
enum class reply_code : std::uint16_t {
    content_too_large = 311,    ///< soft
    no_route = 312,             ///< soft (RabbitMQ: unroutable mandatory message)
    no_consumers = 313,         ///< soft
    connection_forced = 320,    ///< hard: an operator closed the connection
    invalid_path = 402,         ///< hard
    access_refused = 403,       ///< soft
    not_found = 404,            ///< soft
    resource_locked = 405,      ///< soft
    precondition_failed = 406,  ///< soft
    frame_error = 501,          ///< hard
    syntax_error = 502,         ///< hard
    command_invalid = 503,      ///< hard
    channel_error = 504,        ///< hard
    unexpected_frame = 505,     ///< hard
    resource_error = 506,       ///< hard
    not_allowed = 530,          ///< hard
    not_implemented = 540,      ///< hard
    internal_error = 541,       ///< hard
};

/// The category of broker reply codes; its name() is "tarry.amqp.broker".
/// message() gives the spec's name and the number, e.g. "NOT_FOUND (404)";
/// unknown codes are kept as they came.
const std::error_category& broker_category() noexcept;

/// `c` as a std::error_code of broker_category(); found by argument-dependent
/// lookup, so a reply_code converts to std::error_code.
inline std::error_code make_error_code(reply_code c) noexcept {
    return {static_cast<int>(c), broker_category()};
}
/// The error code for any reply code the broker sent, known or not.
inline std::error_code broker_error(std::uint16_t code) noexcept {
    return {static_cast<int>(code), broker_category()};
}

/// What the broker said when it closed a channel or the connection: its
/// reply code and text, and the method that caused it (0 / 0 if none).
struct broker_reply {
    std::uint16_t code = 0;       ///< the reply code, e.g. 404 (see reply_code)
    std::string text;             ///< the broker's words: "NOT_FOUND - no queue 'x' ..."
    std::uint16_t class_id = 0;   ///< the failing method's class; 0 if none
    std::uint16_t method_id = 0;  ///< the failing method's id; 0 if none

    /// "404 NOT_FOUND - no queue 'x' in vhost '/' (in queue.declare)".
    std::string to_string() const;
    /// Equal when every field is.
    friend bool operator==(const broker_reply&, const broker_reply&) = default;
};

/// An error and what a person needs to act on it. `message` is one line
/// naming what failed and why; `reply` is set when the broker closed
/// something. Empty (no code) when nothing failed.
struct diagnostics {
    std::error_code code;               ///< the failure; empty when nothing failed
    std::string message;                ///< one line naming what failed and why
    std::optional<broker_reply> reply;  ///< what the broker said, when it closed something

    /// A failure without a broker reply: `code` and `message` (moved in).
    static diagnostics from(std::error_code code, std::string message = {}) {
        return {code, std::move(message), std::nullopt};
    }
};

/// True when a code means the whole connection is gone and must be rebuilt
/// (socket lost, heartbeat missed, a hard broker reply code such as 320 or
/// 501-541, a handshake failure). False for success, channel-level codes
/// (soft reply codes 311-313 and 403-406, channel_closed, publish_nacked,
/// consumer_cancelled, operation_cancelled, invalid_argument,
/// header_too_large) and for
/// connection_closed (the client's own choice).
bool requires_reconnect(std::error_code ec) noexcept;

/// True for reply codes that close the connection (320, 402, 501-506, 530,
/// 540, 541); false for those that close only a channel.
bool is_hard_reply_code(std::uint16_t code) noexcept;

}  // namespace tarry::amqp

namespace tarry {

/// What tarry's throwing APIs throw: a std::system_error whose code() is
/// the failure's code (so `catch (const std::system_error&)` and comparing
/// code() with amqp::errc or amqp::reply_code values tell an authentication
/// failure from a missing queue), and which keeps the whole
/// amqp::diagnostics, the broker's reply included.
///
/// what() is "context: message" (the diagnostics' message, or the code's
/// message when that is empty); without a context, the message alone.
/// Copying never throws (the text and diagnostics are shared, immutable).
class error : public std::system_error {
public:
    /// `why`, with no context: what() is its message alone.
    explicit error(amqp::diagnostics why);
    /// `context` says what the caller was doing, such as "tarry consumer:
    /// cannot subscribe to 'jobs'".
    error(std::string_view context, amqp::diagnostics why);

    /// "context: message", or the message alone without a context (see above).
    const char* what() const noexcept override;
    /// The failure: code, message and, when the broker closed something,
    /// its reply.
    const amqp::diagnostics& diagnostics() const noexcept;

private:
    struct payload;
    error(std::shared_ptr<const payload> p);
    std::shared_ptr<const payload> p_;
};

}  // namespace tarry

template <>
struct std::is_error_code_enum<tarry::amqp::errc> : std::true_type {};
template <>
struct std::is_error_code_enum<tarry::amqp::reply_code> : std::true_type {};
