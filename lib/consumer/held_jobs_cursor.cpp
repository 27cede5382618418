#include "held_jobs_cursor.hpp"

#include <charconv>

namespace tarry::detail {

namespace {
void append_hex(std::string& out, std::uint64_t v) {
    char buf[16];
    const auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
    out.append(buf, r.ptr);
}

// The whole of `text` as a hex number of 1 to 16 digits.
std::optional<std::uint64_t> hex(std::string_view text) noexcept {
    std::uint64_t v = 0;
    if (text.empty() || text.size() > 16) return std::nullopt;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), v, 16);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;
    return v;
}
}  // namespace

std::string encode_cursor(const queue_place& at) {
    std::string out;
    if (at.ready) {
        out += 'r';
    } else {
        append_hex(out, static_cast<std::uint64_t>(at.due));  // two's complement: a due before the epoch too
        out += '.';
    }
    append_hex(out, at.seq);
    return out;
}

std::optional<queue_place> decode_cursor(std::string_view text) noexcept {
    if (text.starts_with('r')) {
        const auto seq = hex(text.substr(1));
        if (!seq) return std::nullopt;
        return queue_place{true, 0, *seq};
    }
    const auto dot = text.find('.');
    if (dot == std::string_view::npos) return std::nullopt;
    const auto due = hex(text.substr(0, dot));
    const auto seq = hex(text.substr(dot + 1));
    if (!due || !seq) return std::nullopt;
    return queue_place{false, static_cast<std::int64_t>(*due), *seq};
}

}  // namespace tarry::detail
