// Well-formed UTF-8 (see the header).
#include "utf8_text.hpp"

namespace tarry::http_detail {

namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

bool continuation(unsigned char c) noexcept { return (c & 0xC0) == 0x80; }

// The length of the well-formed sequence at s[i], or 0 when there is none.
std::size_t sequence_at(std::string_view s, std::size_t i) noexcept {
    const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const unsigned char c = at(0);
    if (c < 0x80) return 1;
    std::size_t n = 0;
    unsigned char low = 0x80, high = 0xBF;  // the second byte's range (RFC 3629, table 3-7)
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) low = 0xA0;   // no overlong forms
        if (c == 0xED) high = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) low = 0x90;   // no overlong forms
        if (c == 0xF4) high = 0x8F;  // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (s.size() - i < n || at(1) < low || at(1) > high) return 0;
    for (std::size_t k = 2; k < n; ++k)
        if (!continuation(at(k))) return 0;
    return n;
}

}  // namespace

std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = sequence_at(s, i);
        if (n == 0) {
            out += replacement;
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    return out;
}

std::string excerpt(std::string_view s, std::size_t max_bytes) {
    std::string text = valid_utf8(s);
    if (text.size() <= max_bytes) return text;
    std::size_t cut = max_bytes;
    while (cut > 0 && continuation(static_cast<unsigned char>(text[cut]))) --cut;
    text.resize(cut);
    return text + "...";
}

}  // namespace tarry::http_detail
