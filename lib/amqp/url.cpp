// AMQP URL parsing (RabbitMQ's URI specification plus its query options).
#include "tarry/amqp/url.hpp"

#include "tarry/amqp/error.hpp"

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>

namespace tarry::amqp {
namespace {

std::string percent_encode(std::string_view in) {
    static constexpr char digits[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : in) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                           (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
        if (plain) {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += digits[c >> 4];
            out += digits[c & 15];
        }
    }
    return out;
}

template <class T>
std::optional<T> parse_number(std::string_view s, T min, T max) {
    std::uint64_t v = 0;
    if (s.empty()) return std::nullopt;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
    if (v < static_cast<std::uint64_t>(min) || v > static_cast<std::uint64_t>(max)) {
        return std::nullopt;
    }
    return static_cast<T>(v);
}

bool iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

struct parser {
    url_parse_result result;

    url_parse_result& fail(std::string detail) {
        result.error = errc::invalid_url;
        result.detail = std::move(detail);
        return result;
    }

    // One query option; returns an empty string on success, else the detail.
    std::string apply_option(std::string_view key, const std::string& value) {
        connection_config& c = result.config;
        const auto bad = [&](const char* what) {
            return "option " + std::string(key) + "='" + value + "' is not " + what;
        };
        if (key == "heartbeat") {
            auto v = parse_number<std::uint16_t>(value, 0, 65535);
            if (!v) return bad("a number of seconds in 0..65535");
            c.heartbeat = *v;
        } else if (key == "frame_max") {
            auto v = parse_number<std::uint32_t>(value, 0, std::numeric_limits<std::uint32_t>::max());
            if (!v || (*v != 0 && *v < 4096)) return bad("0 or a byte count of at least 4096");
            c.frame_max = *v;
        } else if (key == "channel_max") {
            auto v = parse_number<std::uint16_t>(value, 0, 65535);
            if (!v) return bad("a number in 0..65535");
            c.channel_max = *v;
        } else if (key == "connection_timeout") {
            auto v = parse_number<std::uint32_t>(value, 0, std::numeric_limits<std::uint32_t>::max());
            if (!v) return bad("a number of milliseconds");
            c.connection_timeout = std::chrono::milliseconds(*v);
        } else if (key == "connection_name") {
            c.connection_name = value;
        } else if (key == "auth_mechanism") {
            if (value != "PLAIN") return bad("PLAIN (the only mechanism supported)");
        } else if (key == "verify") {
            if (value == "verify_peer") c.tls_options.verify_peer = true;
            else if (value == "verify_none") c.tls_options.verify_peer = false;
            else return bad("verify_peer or verify_none");
        } else if (key == "cacertfile") {
            c.tls_options.ca_file = value;
        } else if (key == "certfile") {
            c.tls_options.cert_file = value;
        } else if (key == "keyfile") {
            c.tls_options.key_file = value;
        } else if (key == "server_name_indication") {
            c.tls_options.server_name = value;
        } else {
            return "unknown option '" + std::string(key) + "'";
        }
        return {};
    }

    url_parse_result& run(std::string_view url) {
        std::string_view rest;
        if (url.size() >= 7 && iequals(url.substr(0, 7), "amqp://")) {
            result.config.tls = false;
            rest = url.substr(7);
        } else if (url.size() >= 8 && iequals(url.substr(0, 8), "amqps://")) {
            result.config.tls = true;
            rest = url.substr(8);
        } else {
            return fail("scheme must be amqp:// or amqps://");
        }
        if (const auto hash = rest.find('#'); hash != std::string_view::npos) {
            return fail("a fragment ('#...') has no meaning in an AMQP URL");
        }

        std::string_view query;
        if (const auto q = rest.find('?'); q != std::string_view::npos) {
            query = rest.substr(q + 1);
            rest = rest.substr(0, q);
        }
        std::string_view authority = rest, path;
        if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
            authority = rest.substr(0, slash);
            path = rest.substr(slash);
        }

        // user:password@
        if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
            const std::string_view userinfo = authority.substr(0, at);
            authority = authority.substr(at + 1);
            std::string_view user = userinfo, pass;
            bool has_pass = false;
            if (const auto colon = userinfo.find(':'); colon != std::string_view::npos) {
                user = userinfo.substr(0, colon);
                pass = userinfo.substr(colon + 1);
                has_pass = true;
            }
            auto u = percent_decode(user);
            if (!u) return fail("user name has a bad percent-escape");
            result.config.username = std::move(*u);
            if (has_pass) {
                auto p = percent_decode(pass);
                if (!p) return fail("password has a bad percent-escape");
                result.config.password = std::move(*p);
            }
        }

        // host[:port], host may be [v6]
        std::string_view host = authority, port;
        if (!authority.empty() && authority.front() == '[') {
            const auto close = authority.find(']');
            if (close == std::string_view::npos) return fail("IPv6 host lacks its closing ']'");
            host = authority.substr(1, close - 1);
            const std::string_view after = authority.substr(close + 1);
            if (!after.empty()) {
                if (after.front() != ':') return fail("unexpected text after ']' in the host");
                port = after.substr(1);
                if (port.empty()) return fail("empty port after ':'");
            }
        } else if (const auto colon = authority.rfind(':'); colon != std::string_view::npos) {
            host = authority.substr(0, colon);
            port = authority.substr(colon + 1);
            if (port.empty()) return fail("empty port after ':'");
        }
        if (!host.empty()) {
            auto h = percent_decode(host);
            if (!h) return fail("host has a bad percent-escape");
            result.config.host = std::move(*h);
        }
        if (!port.empty()) {
            auto p = parse_number<std::uint16_t>(port, 1, 65535);
            if (!p) return fail("port '" + std::string(port) + "' is not a number in 1..65535");
            result.config.port = *p;
        }

        // /vhost
        if (path.empty() || path == "/") {
            result.config.vhost = "/";
        } else {
            const std::string_view raw = path.substr(1);
            if (raw.find('/') != std::string_view::npos) {
                return fail("vhost '" + std::string(raw) +
                            "' has an unescaped '/' (write it as %2F)");
            }
            auto v = percent_decode(raw);
            if (!v) return fail("vhost has a bad percent-escape");
            result.config.vhost = std::move(*v);
        }

        while (!query.empty()) {
            const auto amp = query.find('&');
            const std::string_view item = query.substr(0, amp);
            query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
            if (item.empty()) continue;
            const auto eq = item.find('=');
            if (eq == std::string_view::npos) {
                return fail("option '" + std::string(item) + "' has no '=value'");
            }
            auto key = percent_decode(item.substr(0, eq));
            auto value = percent_decode(item.substr(eq + 1));
            if (!key || !value) {
                return fail("option '" + std::string(item) + "' has a bad percent-escape");
            }
            if (auto why = apply_option(*key, *value); !why.empty()) return fail(std::move(why));
        }
        return result;
    }
};

}  // namespace

url_parse_result parse_url(std::string_view url, const connection_config& base) {
    parser p;
    p.result.config = base;
    return std::move(p.run(url));
}

std::string to_redacted_url(const connection_config& c) {
    std::string url = c.tls ? "amqps://" : "amqp://";
    url += percent_encode(c.username);
    url += ":***@";
    if (c.host.find(':') != std::string::npos) {
        url += '[' + c.host + ']';
    } else {
        url += percent_encode(c.host);
    }
    url += ':' + std::to_string(c.effective_port());
    url += '/' + percent_encode(c.vhost);
    return url;
}

}  // namespace tarry::amqp
