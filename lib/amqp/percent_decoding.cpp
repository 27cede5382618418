// Percent-decoding (RFC 3986, section 2.1), declared in tarry/amqp/url.hpp:
// the URL's user, password, vhost, host and options, and the HTTP
// endpoint's request targets.
#include "tarry/amqp/url.hpp"

namespace tarry::amqp {
namespace {

int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view in) {
    std::string out;
    out.reserve(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
        if (in[i] != '%') {
            out += in[i];
            continue;
        }
        if (i + 2 >= in.size()) return std::nullopt;
        const int hi = hex_digit(in[i + 1]), lo = hex_digit(in[i + 2]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return out;
}

}  // namespace tarry::amqp
