// Several AMQP URLs, the nodes of one cluster, into one config (url.hpp):
// each URL is parsed alone, then all must agree but for host and port.
#include "tarry/amqp/url.hpp"

#include "tarry/amqp/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace tarry::amqp {
namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }
std::string quoted(std::uint64_t n) { return quoted(std::to_string(n)); }

/// A setting a URL can give, but host and port: the name it is reported by
/// ("its vhost", "option heartbeat") and its value as the URL would write
/// it. A secret's value is compared, never shown.
struct setting {
    const char* name;
    std::string (*value)(const connection_config&);
    bool secret = false;
};

using cfg = connection_config;
constexpr setting settings[] = {
    {"its scheme", [](const cfg& c) -> std::string { return c.tls ? "amqps" : "amqp"; }},
    {"its user name", [](const cfg& c) { return quoted(c.username); }},
    {"its password", [](const cfg& c) { return c.password; }, true},
    {"its vhost", [](const cfg& c) { return quoted(c.vhost); }},
    {"option heartbeat", [](const cfg& c) { return quoted(c.heartbeat); }},
    {"option frame_max", [](const cfg& c) { return quoted(c.frame_max); }},
    {"option channel_max", [](const cfg& c) { return quoted(c.channel_max); }},
    {"option connection_timeout",
     [](const cfg& c) { return quoted(static_cast<std::uint64_t>(c.connection_timeout.count())); }},
    {"option connection_name", [](const cfg& c) { return quoted(c.connection_name); }},
    {"option verify",
     [](const cfg& c) { return quoted(c.tls_options.verify_peer ? "verify_peer" : "verify_none"); }},
    {"option cacertfile", [](const cfg& c) { return quoted(c.tls_options.ca_file); }},
    {"option certfile", [](const cfg& c) { return quoted(c.tls_options.cert_file); }},
    {"option keyfile", [](const cfg& c) { return quoted(c.tls_options.key_file); }},
    {"option server_name_indication", [](const cfg& c) { return quoted(c.tls_options.server_name); }},
};

/// What `c` differs from `first` in ("its vhost ('b', URL 1 has 'a')"), or
/// nothing when they agree.
std::optional<std::string> difference(const cfg& c, const cfg& first) {
    for (const auto& s : settings) {
        const auto mine = s.value(c), theirs = s.value(first);
        if (mine == theirs) continue;
        if (s.secret) return std::string(s.name);
        return std::string(s.name) + " (" + mine + ", URL 1 has " + theirs + ")";
    }
    return std::nullopt;
}

}  // namespace

url_parse_result parse_urls(std::span<const std::string_view> urls, const connection_config& base) {
    url_parse_result out;
    const auto fail = [&out](std::string detail) {
        out.error = errc::invalid_url;
        out.detail = std::move(detail);
        return std::move(out);
    };
    if (urls.empty()) return fail("no URL given");
    const auto numbered = [n = urls.size()](std::size_t i) {
        return "URL " + std::to_string(i + 1) + " of " + std::to_string(n);
    };

    connection_config first_base = base;
    first_base.failover.clear();
    out = parse_url(urls[0], first_base);
    if (out.error) return fail(numbered(0) + ": " + out.detail);
    for (std::size_t i = 1; i < urls.size(); ++i) {
        auto r = parse_url(urls[i], first_base);
        if (r.error) return fail(numbered(i) + ": " + r.detail);
        if (auto what = difference(r.config, out.config)) {
            return fail(numbered(i) + " differs from URL 1 in " + *what);
        }
        out.config.failover.push_back({std::move(r.config.host), r.config.port});
    }
    return out;
}

}  // namespace tarry::amqp
