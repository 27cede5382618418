// Incremental frame parser: bytes in, in chunks of any size, frames out.
//
// The parser owns one growing buffer. Bytes go in with feed() (a copy) or,
// to skip that copy, by reading straight into prepare() and calling
// commit(). next() hands out complete frames one at a time as views into the
// buffer; it never allocates and never moves bytes, so every view stays
// valid until the next feed(), prepare() or reset(). Leftover bytes of a
// partial frame are moved to the front of the buffer only when space is
// needed, so parsing costs O(bytes) overall.
//
// Errors are sticky: once error() is set, next() returns nothing and feed()
// ignores its input until reset(). detail() says exactly what was wrong
// (which frame type, size, channel, octet). Not thread-safe: one owner
// (the I/O thread) calls everything.
#pragma once

#include "tarry/amqp/wire/error.hpp"
#include "tarry/amqp/wire/frame.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace tarry::amqp::wire {

/// Parses a byte stream into frames, in chunks of any size: views into its
/// own buffer, sticky errors (see this header's opening comment). Not
/// thread-safe: one owner calls everything.
class frame_parser {
public:
    /// frame_max limits the whole frame (payload + 8); 0 means no limit but
    /// the u32 size field. Before tuning it must be min_frame_max (4096).
    explicit frame_parser(std::uint32_t frame_max = min_frame_max);

    /// Changes the limit for frames not yet returned (after connection.tune).
    void set_frame_max(std::uint32_t frame_max) noexcept { frame_max_ = frame_max; }
    /// The current limit; 0: none but the u32 size field.
    std::uint32_t frame_max() const noexcept { return frame_max_; }

    /// Appends received bytes (copied). Invalidates earlier views.
    void feed(std::span<const std::uint8_t> bytes);
    /// Writable space for at least `n` bytes at the end of the buffer, for a
    /// socket read into it; then commit() how many were written. Invalidates
    /// earlier views. The span is valid until the next call on the parser.
    std::span<std::uint8_t> prepare(std::size_t n);
    /// Makes `n` bytes written into the last prepare() span part of the
    /// input (n at most that span's size; more is clamped; a feed() since
    /// that prepare() voids it, so commit() then adds nothing).
    void commit(std::size_t n) noexcept;

    /// The next complete frame, or nothing when more bytes are needed or an
    /// error occurred (check error()). Checks, as soon as the bytes allow:
    /// type (unknown_frame_type), size against frame_max (frame_too_large),
    /// heartbeat on channel 0 with no payload (bad_heartbeat), end octet
    /// 0xCE (bad_frame_end). If the very first bytes of the stream are a
    /// protocol header (a server refusing ours), fails with
    /// bad_protocol_header naming the version it offered.
    std::optional<frame_view> next();

    /// The first error, or none.
    std::error_code error() const noexcept { return error_; }
    /// A one-line explanation of error() (empty when none).
    const std::string& detail() const noexcept { return detail_; }

    /// Bytes received but not yet returned as frames.
    std::size_t buffered() const noexcept { return end_ - begin_; }
    /// Total bytes consumed as frames since construction or reset().
    std::uint64_t consumed() const noexcept { return consumed_; }

    /// Forgets buffered bytes and any error, as for a new connection (the
    /// frame_max is kept; set it again if the new connection needs 4096).
    void reset() noexcept;

private:
    void make_room(std::size_t n);
    void fail(errc code, std::string detail);
    bool check_protocol_reply();

    std::unique_ptr<std::uint8_t[]> buf_;
    std::size_t capacity_ = 0;
    std::size_t begin_ = 0;  // first byte not yet returned as a frame
    std::size_t end_ = 0;    // one past the last received byte
    std::size_t prepared_ = 0;
    std::uint64_t consumed_ = 0;
    std::uint32_t frame_max_;
    std::error_code error_;
    std::string detail_;
};

}  // namespace tarry::amqp::wire
