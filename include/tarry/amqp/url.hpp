// AMQP URLs: amqp://user:pass@host:port/vhost?option=value&...
//
// Follows RabbitMQ's URI specification: user, password and vhost are
// percent-decoded; no path or "/" alone is the default vhost "/" (write
// "%2F" to be explicit); an unescaped '/' inside the vhost is an error.
// Hosts may be names, IPv4 or bracketed IPv6 addresses. Query options:
//   heartbeat=SECONDS  frame_max=BYTES  channel_max=N
//   connection_timeout=MILLISECONDS
//   connection_name=TEXT
//   verify=verify_peer|verify_none   cacertfile=PATH  certfile=PATH
//   keyfile=PATH  server_name_indication=NAME   (amqps only)
//   auth_mechanism=PLAIN
// An unknown option is an error, so that a misspelt "hearbeat=5" is not
// silently ignored. Pure functions; thread-safe.
#pragma once

#include "tarry/amqp/connection_config.hpp"

#include <string>
#include <string_view>
#include <system_error>

namespace tarry::amqp {

/// The result of parse_url: on success `error` is empty and `config` holds
/// the settings (fields the URL does not mention keep their defaults, see
/// connection_config); on failure `error` is errc::invalid_url and `detail`
/// names what was wrong, e.g. "port '99999' is not a number in 1..65535".
struct url_parse_result {
    connection_config config;
    std::error_code error;
    std::string detail;
};

/// Parses an amqp:// or amqps:// URL into a config built on `base` (so
/// settings not in the URL, such as reconnect policy, come from it).
url_parse_result parse_url(std::string_view url, const connection_config& base = {});

/// The URL for a config, with the password replaced by "***" (for logs).
std::string to_redacted_url(const connection_config& config);

}  // namespace tarry::amqp
