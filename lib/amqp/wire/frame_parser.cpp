// Incremental frame parser (see the header for the buffer discipline).
#include "tarry/amqp/wire/frame_parser.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace tarry::amqp::wire {
namespace {

constexpr std::size_t initial_capacity = 64 * 1024;

std::uint32_t get_u32(const std::uint8_t* p) noexcept {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
           std::uint32_t{p[3]};
}

std::string hex8(std::uint8_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", v);
    return buf;
}

bool known_type(std::uint8_t t) noexcept {
    switch (static_cast<frame_type>(t)) {
    case frame_type::method:
    case frame_type::header:
    case frame_type::body:
    case frame_type::heartbeat: return true;
    }
    return false;
}

}  // namespace

frame_parser::frame_parser(std::uint32_t frame_max) : frame_max_(frame_max) {}

void frame_parser::reset() noexcept {
    begin_ = end_ = prepared_ = 0;
    consumed_ = 0;
    error_.clear();
    detail_.clear();
}

void frame_parser::fail(errc code, std::string detail) {
    if (error_) return;
    error_ = code;
    detail_ = std::move(detail);
}

// Ensures `n` free bytes after end_. Moves the unread tail to the front
// only when that makes room (the tail is at most one partial frame plus
// what the caller fed ahead, so each byte moves O(1) times on average);
// otherwise grows geometrically.
void frame_parser::make_room(std::size_t n) {
    if (begin_ == end_) begin_ = end_ = 0;
    if (capacity_ - end_ >= n) return;
    const std::size_t live = end_ - begin_;
    if (begin_ > 0 && capacity_ - live >= n && live <= capacity_ / 2) {
        std::memmove(buf_.get(), buf_.get() + begin_, live);
        begin_ = 0;
        end_ = live;
        return;
    }
    std::size_t cap = std::max(capacity_ * 2, initial_capacity);
    while (cap - live < n) cap *= 2;
    auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(cap);
    if (live) std::memcpy(bigger.get(), buf_.get() + begin_, live);
    buf_ = std::move(bigger);
    capacity_ = cap;
    begin_ = 0;
    end_ = live;
}

void frame_parser::feed(std::span<const std::uint8_t> bytes) {
    prepared_ = 0;  // a pending prepare() span may have moved
    if (error_ || bytes.empty()) return;
    make_room(bytes.size());
    std::memcpy(buf_.get() + end_, bytes.data(), bytes.size());
    end_ += bytes.size();
}

std::span<std::uint8_t> frame_parser::prepare(std::size_t n) {
    make_room(n);
    prepared_ = capacity_ - end_;
    return {buf_.get() + end_, prepared_};
}

void frame_parser::commit(std::size_t n) noexcept {
    n = std::min(n, prepared_);
    prepared_ = 0;
    if (error_) return;
    end_ += n;
}

// At the very start of the stream, a server that refuses our protocol
// header answers with its own ("AMQP" + version) instead of a frame. 'A' is
// no frame type, so the first byte tells; wait for all 8 to name the version.
bool frame_parser::check_protocol_reply() {
    const std::size_t have = end_ - begin_;
    const std::uint8_t* p = buf_.get() + begin_;
    const std::size_t n = std::min<std::size_t>(have, 4);
    if (std::memcmp(p, "AMQP", n) != 0) return true;  // not a header: parse as a frame
    if (have < protocol_header.size()) return false;  // wait for the version
    char buf[128];
    std::snprintf(buf, sizeof buf,
                  "server answered with protocol header AMQP %u-%u-%u-%u instead of a frame "
                  "(it refuses AMQP 0-9-1)",
                  p[4], p[5], p[6], p[7]);
    fail(errc::bad_protocol_header, buf);
    return false;
}

std::optional<frame_view> frame_parser::next() {
    if (error_) return std::nullopt;
    const std::size_t have = end_ - begin_;
    if (have == 0) return std::nullopt;
    const std::uint8_t* p = buf_.get() + begin_;

    if (consumed_ == 0 && p[0] == 'A' && !check_protocol_reply()) return std::nullopt;
    if (!known_type(p[0])) {
        fail(errc::unknown_frame_type, "frame type " + std::to_string(p[0]) + " (" + hex8(p[0]) +
                                           ") at stream offset " + std::to_string(consumed_));
        return std::nullopt;
    }
    if (have < frame_header_size) return std::nullopt;

    const auto type = static_cast<frame_type>(p[0]);
    const auto channel = static_cast<std::uint16_t>((p[1] << 8) | p[2]);
    const std::uint32_t size = get_u32(p + 3);
    if (type == frame_type::heartbeat && (size != 0 || channel != 0)) {
        fail(errc::bad_heartbeat, "heartbeat frame on channel " + std::to_string(channel) +
                                      " with a payload of " + std::to_string(size) +
                                      " bytes (must be channel 0, empty)");
        return std::nullopt;
    }
    const std::uint64_t total = std::uint64_t{size} + frame_overhead;
    if (frame_max_ != 0 && total > frame_max_) {
        fail(errc::frame_too_large, std::string(to_string(type)) + " frame on channel " +
                                        std::to_string(channel) + " of " +
                                        std::to_string(total) + " bytes (payload " +
                                        std::to_string(size) + ") above frame_max " +
                                        std::to_string(frame_max_));
        return std::nullopt;
    }
    if (have < total) return std::nullopt;
    const std::uint8_t end_octet = p[frame_header_size + size];
    if (end_octet != frame_end) {
        fail(errc::bad_frame_end, std::string(to_string(type)) + " frame on channel " +
                                      std::to_string(channel) + " with payload of " +
                                      std::to_string(size) + " bytes ends with " +
                                      hex8(end_octet) + ", not 0xce");
        return std::nullopt;
    }
    begin_ += static_cast<std::size_t>(total);
    consumed_ += total;
    return frame_view{type, channel, {p + frame_header_size, size}};
}

}  // namespace tarry::amqp::wire
