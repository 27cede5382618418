// Frame envelopes, the protocol header, and content splitting.
#include "tarry/amqp/wire/frame.hpp"

#include "tarry/amqp/wire/byte_writer.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace tarry::amqp::wire {

const char* to_string(frame_type t) noexcept {
    switch (t) {
    case frame_type::method: return "method";
    case frame_type::header: return "header";
    case frame_type::body: return "body";
    case frame_type::heartbeat: return "heartbeat";
    }
    return "unknown";
}

namespace {

void set_detail(std::string* detail, std::string text) {
    if (detail) *detail = std::move(text);
}

// Up to 8 received bytes for a message: "AMQP 00 00 09 00" when the first
// four are printable, else all in hex: "16 03 01 02 00 01 00 01".
std::string show_header(std::span<const std::uint8_t> b) {
    const std::size_t n = std::min<std::size_t>(b.size(), 8);
    const bool text = n >= 4 && std::all_of(b.begin(), b.begin() + 4, [](std::uint8_t c) {
        return c >= 0x20 && c < 0x7f;
    });
    std::string s;
    std::size_t i = 0;
    if (text) {
        s.assign(reinterpret_cast<const char*>(b.data()), 4);
        i = 4;
    }
    for (; i < n; ++i) {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%02x", b[i]);
        if (!s.empty()) s += ' ';
        s += buf;
    }
    return s;
}

// Makes room for `more` bytes without defeating the vector's geometric
// growth (an exact reserve on every append would make appending O(n^2)).
void grow_for(std::vector<std::uint8_t>& out, std::size_t more) {
    const std::size_t need = out.size() + more;
    if (need > out.capacity()) out.reserve(std::max(need, out.capacity() * 2));
}

void put_u32(std::uint8_t* p, std::uint32_t v) noexcept {
    p[0] = static_cast<std::uint8_t>(v >> 24);
    p[1] = static_cast<std::uint8_t>(v >> 16);
    p[2] = static_cast<std::uint8_t>(v >> 8);
    p[3] = static_cast<std::uint8_t>(v);
}

}  // namespace

std::error_code check_protocol_header(std::span<const std::uint8_t> received,
                                      std::string* detail) {
    const std::size_t n = std::min(received.size(), protocol_header.size());
    if (!std::equal(received.begin(), received.begin() + static_cast<std::ptrdiff_t>(n),
                    protocol_header.begin())) {
        set_detail(detail, "expected protocol header AMQP 00 00 09 01, got " +
                               show_header(received));
        return errc::bad_protocol_header;
    }
    if (received.size() < protocol_header.size()) {
        set_detail(detail, "protocol header: " + std::to_string(received.size()) +
                               " of 8 bytes");
        return errc::truncated;
    }
    if (received.size() > protocol_header.size()) {
        set_detail(detail, std::to_string(received.size() - protocol_header.size()) +
                               " bytes after the protocol header");
        return errc::trailing_bytes;
    }
    return {};
}

std::size_t begin_frame(std::vector<std::uint8_t>& out, frame_type type, std::uint16_t channel) {
    const std::size_t at = out.size();
    const std::uint8_t head[frame_header_size] = {static_cast<std::uint8_t>(type),
                                                  static_cast<std::uint8_t>(channel >> 8),
                                                  static_cast<std::uint8_t>(channel), 0, 0, 0, 0};
    out.insert(out.end(), head, head + frame_header_size);
    return at;
}

std::error_code end_frame(std::vector<std::uint8_t>& out, std::size_t at,
                          std::uint32_t frame_max) {
    const std::size_t payload = out.size() - at - frame_header_size;
    const bool over_u32 = payload > std::numeric_limits<std::uint32_t>::max();
    const bool over_max = frame_max != 0 && payload + frame_overhead > frame_max;
    if (over_u32 || over_max) {
        out.resize(at);
        return errc::frame_too_large;
    }
    put_u32(out.data() + at + 3, static_cast<std::uint32_t>(payload));
    out.push_back(frame_end);
    return {};
}

std::error_code encode_frame(std::vector<std::uint8_t>& out, frame_type type,
                             std::uint16_t channel, std::span<const std::uint8_t> payload) {
    if (payload.size() > std::numeric_limits<std::uint32_t>::max()) return errc::frame_too_large;
    grow_for(out, payload.size() + frame_overhead);
    const std::size_t at = begin_frame(out, type, channel);
    out.insert(out.end(), payload.begin(), payload.end());
    return end_frame(out, at, 0);
}

void encode_heartbeat(std::vector<std::uint8_t>& out) {
    const std::uint8_t hb[] = {static_cast<std::uint8_t>(frame_type::heartbeat), 0, 0, 0, 0, 0,
                               0, frame_end};
    out.insert(out.end(), std::begin(hb), std::end(hb));
}

std::error_code encode_content(std::vector<std::uint8_t>& out, std::uint16_t channel,
                               const basic_properties& properties,
                               std::span<const std::uint8_t> body, std::uint32_t frame_max,
                               std::string* detail) {
    if (frame_max != 0 && frame_max < min_frame_max) {
        set_detail(detail, "frame_max " + std::to_string(frame_max) + " below the minimum 4096");
        return errc::invalid_value;
    }
    const std::size_t start = out.size();

    const std::size_t at = begin_frame(out, frame_type::header, channel);
    byte_writer w(out);
    // The content_header fields written directly: no copy of the properties.
    w.u16(basic_class_id);
    w.u16(0);
    w.u64(body.size());
    encode_properties(w, properties);
    if (!w.ok()) {
        set_detail(detail, w.detail());
        out.resize(start);
        return w.error();
    }
    const std::size_t header_frame = out.size() - at + 1;
    if (auto ec = end_frame(out, at, frame_max)) {
        set_detail(detail, "content header frame of " + std::to_string(header_frame) +
                               " bytes above frame_max " + std::to_string(frame_max));
        out.resize(start);
        return ec;
    }

    const std::size_t chunk = frame_max == 0
                                  ? std::numeric_limits<std::uint32_t>::max()
                                  : frame_max - frame_overhead;
    const std::size_t frames = body.empty() ? 0 : (body.size() + chunk - 1) / chunk;
    grow_for(out, body.size() + frames * frame_overhead);
    for (std::size_t off = 0; off < body.size(); off += chunk) {
        const auto piece = body.subspan(off, std::min(chunk, body.size() - off));
        const std::size_t f = begin_frame(out, frame_type::body, channel);
        out.insert(out.end(), piece.begin(), piece.end());
        // Cannot fail: the piece fits frame_max and the size field.
        (void)end_frame(out, f, frame_max);
    }
    return {};
}

}  // namespace tarry::amqp::wire
