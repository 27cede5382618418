// Methods of class connection (10): handshake, tuning, close, flow control
// by the broker (blocked/unblocked) and credential refresh (update-secret).
//
// Plain values (see methods.hpp for the codec): members follow the spec's
// arguments in order, reserved arguments included, so the codec can walk
// fields(). Copyable; no shared state.
#pragma once

#include "tarry/amqp/wire/method_field.hpp"

namespace tarry::amqp::wire {

/// connection.start (server → client): protocol version, server properties
/// (with its `capabilities` table), space-separated SASL mechanisms and locales.
struct connection_start {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 10;
    static constexpr std::string_view name = "connection.start";
    static constexpr bool has_content = false;
    ///@}
    std::uint8_t version_major = 0;  ///< the protocol's major version (0)
    std::uint8_t version_minor = 9;  ///< the protocol's minor version (9)
    field_table server_properties{};  ///< its properties, `capabilities` included
    std::string mechanisms = "PLAIN";  ///< the SASL mechanisms offered, space-separated
    std::string locales = "en_US";  ///< the locales offered, space-separated

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = connection_start;
        return std::tuple{field<octet>("version-major", &S::version_major),
                          field<octet>("version-minor", &S::version_minor),
                          field<table>("server-properties", &S::server_properties),
                          field<longstr>("mechanisms", &S::mechanisms),
                          field<longstr>("locales", &S::locales)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_start&, const connection_start&) = default;
};

/// connection.start-ok (client → server): client properties, the chosen
/// mechanism and its response (PLAIN: "\0user\0password"), the locale.
struct connection_start_ok {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 11;
    static constexpr std::string_view name = "connection.start-ok";
    static constexpr bool has_content = false;
    ///@}
    field_table client_properties{};  ///< its properties, `capabilities` included
    std::string mechanism = "PLAIN";  ///< the SASL mechanism chosen
    std::string response{};  ///< the mechanism's response
    std::string locale = "en_US";  ///< the locale chosen

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = connection_start_ok;
        return std::tuple{field<table>("client-properties", &S::client_properties),
                          field<shortstr>("mechanism", &S::mechanism),
                          field<longstr>("response", &S::response),
                          field<shortstr>("locale", &S::locale)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_start_ok&, const connection_start_ok&) = default;
};

/// connection.secure (server → client): a SASL challenge.
struct connection_secure {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 20;
    static constexpr std::string_view name = "connection.secure";
    static constexpr bool has_content = false;
    ///@}
    std::string challenge{};  ///< the SASL challenge

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::longstr>("challenge", &connection_secure::challenge)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_secure&, const connection_secure&) = default;
};

/// connection.secure-ok (client → server): the answer to a SASL challenge.
struct connection_secure_ok {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 21;
    static constexpr std::string_view name = "connection.secure-ok";
    static constexpr bool has_content = false;
    ///@}
    std::string response{};  ///< the answer to the challenge

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::longstr>("response", &connection_secure_ok::response)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_secure_ok&, const connection_secure_ok&) = default;
};

namespace detail {

/// connection.tune and connection.tune-ok: channel_max, frame_max (bytes)
/// and heartbeat (seconds); 0 means "no limit" / "no heartbeats".
template <std::uint16_t MethodId, fixed_string Name>
struct tune_method {
    static constexpr std::uint16_t class_id = 10, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    std::uint16_t channel_max = 0;
    std::uint32_t frame_max = 0;
    std::uint16_t heartbeat = 0;

    static constexpr auto fields() {
        using enum wire_type;
        return std::tuple{field<short_>("channel-max", &tune_method::channel_max),
                          field<long_>("frame-max", &tune_method::frame_max),
                          field<short_>("heartbeat", &tune_method::heartbeat)};
    }
    friend bool operator==(const tune_method&, const tune_method&) = default;
};

/// connection.close and channel.close: why the connection or channel ends.
/// The spec's class-id / method-id arguments (the method that caused the
/// error, 0 if none) are named failing_* here because class_id / method_id
/// name the close method itself.
template <std::uint16_t ClassId, std::uint16_t MethodId, fixed_string Name>
struct close_method {
    static constexpr std::uint16_t class_id = ClassId, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;
    std::uint16_t reply_code = 200;
    std::string reply_text{};
    std::uint16_t failing_class_id = 0;
    std::uint16_t failing_method_id = 0;

    static constexpr auto fields() {
        using enum wire_type;
        return std::tuple{field<short_>("reply-code", &close_method::reply_code),
                          field<shortstr>("reply-text", &close_method::reply_text),
                          field<short_>("class-id", &close_method::failing_class_id),
                          field<short_>("method-id", &close_method::failing_method_id)};
    }
    friend bool operator==(const close_method&, const close_method&) = default;
};

}  // namespace detail

/// connection.tune (server → client): the server's proposed limits:
/// channel_max, frame_max (bytes) and heartbeat (seconds); 0 means "no
/// limit" / "no heartbeats".
using connection_tune = detail::tune_method<30, "connection.tune">;

/// connection.tune-ok (client → server): the limits the client settles on.
/// RabbitMQ drops the socket unless channel_max ≥ 1 and 4096 ≤ frame_max ≤
/// its own proposal; checking that is the connection's job, not the codec's.
using connection_tune_ok = detail::tune_method<31, "connection.tune-ok">;

/// connection.open (client → server): the virtual host to use.
struct connection_open {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 40;
    static constexpr std::string_view name = "connection.open";
    static constexpr bool has_content = false;
    ///@}
    std::string virtual_host = "/";  ///< the virtual host to use
    std::string reserved_1{};  ///< "capabilities" in 0-8; send empty
    bool reserved_2 = false; ///< "insist" in 0-8; send false

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = connection_open;
        return std::tuple{field<shortstr>("virtual-host", &S::virtual_host),
                          field<shortstr>("reserved-1", &S::reserved_1),
                          field<bit>("reserved-2", &S::reserved_2)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_open&, const connection_open&) = default;
};

/// connection.open-ok (server → client).
struct connection_open_ok {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 41;
    static constexpr std::string_view name = "connection.open-ok";
    static constexpr bool has_content = false;
    ///@}
    std::string reserved_1{};  ///< "known-hosts" in 0-8

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::shortstr>("reserved-1", &connection_open_ok::reserved_1)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_open_ok&, const connection_open_ok&) = default;
};

/// connection.close (either way): why the connection ends: reply_code and
/// reply_text, and the method that caused it (failing_class_id,
/// failing_method_id; 0 if none).
using connection_close = detail::close_method<10, 50, "connection.close">;

/// connection.close-ok (either way).
using connection_close_ok = detail::method_without_arguments<10, 51, "connection.close-ok">;

/// connection.blocked (server → client; RabbitMQ extension): the broker
/// stopped reading publishes (memory or disk alarm). Sent only to clients
/// that advertise the `connection.blocked` capability.
struct connection_blocked {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 60;
    static constexpr std::string_view name = "connection.blocked";
    static constexpr bool has_content = false;
    ///@}
    std::string reason{};  ///< why, in the broker's words (a memory or disk alarm)

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        return std::tuple{field<wire_type::shortstr>("reason", &connection_blocked::reason)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_blocked&, const connection_blocked&) = default;
};

/// connection.unblocked (server → client; RabbitMQ extension): the alarm cleared.
using connection_unblocked = detail::method_without_arguments<10, 61, "connection.unblocked">;

/// connection.update-secret (client → server; RabbitMQ extension): replaces
/// the credential of a live connection (a refreshed OAuth 2 token, for
/// instance).
struct connection_update_secret {
    /// Its identity, for the codec (method_field.hpp): class id, method
    /// id, the spec's name, and whether content (header and body frames)
    /// follows it.
    ///@{
    static constexpr std::uint16_t class_id = 10, method_id = 70;
    static constexpr std::string_view name = "connection.update-secret";
    static constexpr bool has_content = false;
    ///@}
    std::string new_secret{};  ///< the new credential
    std::string reason{};  ///< why, for the broker's log

    /// Its arguments in the spec's order, for the codec (method_field.hpp).
    static constexpr auto fields() {
        using enum wire_type;
        using S = connection_update_secret;
        return std::tuple{field<longstr>("new-secret", &S::new_secret),
                          field<shortstr>("reason", &S::reason)};
    }
    /// Equal when every argument is.
    friend bool operator==(const connection_update_secret&,
                           const connection_update_secret&) = default;
};

/// connection.update-secret-ok (server → client; RabbitMQ extension).
using connection_update_secret_ok =
    detail::method_without_arguments<10, 71, "connection.update-secret-ok">;

}  // namespace tarry::amqp::wire
