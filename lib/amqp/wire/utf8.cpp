// Well-formed UTF-8 sequences (see the header).
#include "tarry/amqp/wire/utf8.hpp"

namespace tarry::amqp::wire {

std::size_t utf8_sequence(std::string_view s) noexcept {
    if (s.empty()) return 0;
    const auto b = [&s](std::size_t i) { return static_cast<unsigned char>(s[i]); };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range (RFC 3629, table 3-7)
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0) lo = 0xa0;  // no overlong forms
        if (c == 0xed) hi = 0x9f;  // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0) lo = 0x90;  // no overlong forms
        if (c == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
    for (std::size_t i = 2; i < n; ++i)
        if (b(i) < 0x80 || b(i) > 0xbf) return 0;
    return n;
}

}  // namespace tarry::amqp::wire
