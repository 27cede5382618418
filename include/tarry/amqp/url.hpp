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
// silently ignored. The nodes of a cluster are a list of URLs (parse_urls),
// not one string: a ',' may appear unescaped inside a URL. Pure functions;
// thread-safe.
#pragma once

#include "tarry/amqp/connection_config.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace tarry::amqp {

/// The result of parse_url: on success `error` is empty and `config` holds
/// the settings (fields the URL does not mention keep their defaults, see
/// connection_config); on failure `error` is errc::invalid_url and `detail`
/// names what was wrong, such as "port '99999' is not a number in 1..65535".
struct url_parse_result {
    connection_config config;  ///< the settings; partly filled in when parsing failed
    std::error_code error;     ///< empty on success, errc::invalid_url on failure
    std::string detail;        ///< what was wrong; empty on success
};

/// Parses an amqp:// or amqps:// URL into a config built on `base` (so
/// settings not in the URL, such as reconnect policy, come from it).
url_parse_result parse_url(std::string_view url, const connection_config& base = {});

/// Parses the URLs of one broker's nodes (a cluster) into a config built on
/// `base`: the first URL's host and port become config.host and port, each
/// further URL's host and port an entry of config.failover, in order
/// (base.failover is replaced). The URLs describe one connection, so they
/// must agree on everything else: scheme (amqp or amqps), user name,
/// password, vhost and query options (repeat the options on each URL).
/// Errors (errc::invalid_url): an empty list ("no URL given"); a bad URL,
/// "URL 2 of 3: " and what parse_url says; a disagreement, which URL and in
/// what, e.g. "URL 3 of 3 differs from URL 1 in its vhost ('b', URL 1 has
/// 'a')" (a password is never shown).
url_parse_result parse_urls(std::span<const std::string_view> urls,
                            const connection_config& base = {});

/// The URL for a config's first address (host:port), with the password
/// replaced by "***" (for logs).
std::string to_redacted_url(const connection_config& config);

/// Percent-decodes `in` (RFC 3986, 2.1): each %XX (two hex digits, either
/// case) becomes its byte; '+' stays '+' (a space only in HTML forms).
/// Nothing when a '%' is not followed by two hex digits. How a URL's parts
/// are read; the HTTP endpoint reads its request targets with it too.
std::optional<std::string> percent_decode(std::string_view in);

}  // namespace tarry::amqp
