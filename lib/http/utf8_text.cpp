// Well-formed UTF-8 (see the header).
#include "utf8_text.hpp"

#include "tarry/amqp/wire/utf8.hpp"

namespace tarry::http_detail {

namespace {

constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD

bool continuation(unsigned char c) noexcept { return (c & 0xC0) == 0x80; }

}  // namespace

std::string valid_utf8(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = amqp::wire::utf8_sequence(s.substr(i));
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
