// Pure pieces of the connection handshake: what we tell the broker about
// ourselves, the PLAIN response, and tune negotiation.
#pragma once

#include "machine_types.hpp"

#include <string>
#include <string_view>

namespace tarry::amqp::detail {

/// tarry's version, as meson.build sets it (client_version.cpp.in).
extern const char* const client_version;

/// client-properties for connection.start-ok: product, version, platform,
/// the capabilities tarry implements (publisher_confirms,
/// consumer_cancel_notify, basic.nack, connection.blocked,
/// authentication_failure_close, per_consumer_qos,
/// exchange_exchange_bindings) and connection_name when given.
wire::field_table client_properties(std::string_view connection_name);

/// SASL PLAIN: "\0user\0password".
std::string plain_response(std::string_view user, std::string_view password);

/// True when the space-separated list holds `mechanism`.
bool offers_mechanism(std::string_view mechanisms, std::string_view mechanism) noexcept;

/// The limits for tune-ok from the broker's proposal and ours: for
/// channel_max and frame_max the smaller of the two where both are
/// non-zero, else the non-zero one (channel_max 0 on both = 65535; frame_max
/// 0 on both = 131072), frame_max at least 4096; heartbeat 0 when we ask
/// for 0, else the smaller non-zero value.
negotiated_limits negotiate(const wire::connection_tune& proposal, std::uint16_t channel_max,
                            std::uint32_t frame_max, std::uint16_t heartbeat) noexcept;

}  // namespace tarry::amqp::detail
