// AMQP 0-9-1 frames: the protocol header, the frame envelope, and writing a
// whole content (header frame + body frames) for a channel.
//
// Frame: type u8, channel u16, size u32, payload[size], 0xCE. Pure
// functions over bytes; encoders append to a vector the caller owns and, on
// failure, leave it exactly as it was. Nothing here throws on bad input
// (only std::bad_alloc from the vector).
#pragma once

#include "tarry/amqp/wire/error.hpp"
#include "tarry/amqp/wire/properties.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tarry::amqp::wire {

/// The frame types RabbitMQ sends and accepts (heartbeat is 8, not 4).
enum class frame_type : std::uint8_t {
    method = 1,     ///< a method and its arguments
    header = 2,     ///< a content header: class, body size, properties
    body = 3,       ///< a piece of a content's body
    heartbeat = 8,  ///< a heartbeat: channel 0, no payload
};

/// "method", "header", "body", "heartbeat", or "unknown".
const char* to_string(frame_type t) noexcept;

/// What a client sends first: "AMQP" 0 0 9 1.
inline constexpr std::array<std::uint8_t, 8> protocol_header{'A', 'M', 'Q', 'P', 0, 0, 9, 1};

/// Checks received bytes against protocol_header. Success only for exactly
/// those 8 bytes; errc::truncated for a prefix of them that is too short;
/// errc::bad_protocol_header otherwise (e.g. "AMQP" 0 0 9 0 from a server
/// that refuses our version). `detail`, when given, says what was seen.
std::error_code check_protocol_header(std::span<const std::uint8_t> received,
                                      std::string* detail = nullptr);

/// The octet that ends every frame.
inline constexpr std::uint8_t frame_end = 0xCE;
/// Bytes a frame adds around its payload: 7 before, 1 after.
inline constexpr std::size_t frame_header_size = 7;
inline constexpr std::size_t frame_overhead = frame_header_size + 1;  ///< 8: both
/// The frame_max every peer must accept, and the limit before tuning.
inline constexpr std::uint32_t min_frame_max = 4096;

/// A frame that owns its payload.
struct frame {
    frame_type type = frame_type::heartbeat;  ///< its type
    std::uint16_t channel = 0;                ///< its channel; 0: the connection
    std::vector<std::uint8_t> payload;        ///< without the frame header and end octet

    /// Equal when type, channel and payload are.
    friend bool operator==(const frame&, const frame&) = default;
};

/// A frame whose payload points into a buffer owned by someone else (the
/// frame_parser that produced it, see there for how long it stays valid).
struct frame_view {
    frame_type type = frame_type::heartbeat;  ///< its type
    std::uint16_t channel = 0;                ///< its channel; 0: the connection
    std::span<const std::uint8_t> payload;    ///< as frame's, in the owner's buffer

    /// A copy that owns its payload.
    frame to_frame() const { return {type, channel, {payload.begin(), payload.end()}}; }
};

/// Appends one frame. Fails with frame_too_large (nothing appended) for a
/// payload over the u32 size field; the caller checks frame_max.
[[nodiscard]] std::error_code encode_frame(std::vector<std::uint8_t>& out, frame_type type,
                                           std::uint16_t channel,
                                           std::span<const std::uint8_t> payload);
/// The same, for a frame.
[[nodiscard]] inline std::error_code encode_frame(std::vector<std::uint8_t>& out,
                                                  const frame& f) {
    return encode_frame(out, f.type, f.channel, f.payload);
}

/// Writing a frame in place, so a payload is encoded straight into `out`:
/// begin_frame appends the 7-byte frame header and returns its offset; the
/// caller appends the payload; end_frame patches the size and appends 0xCE.
/// end_frame fails (truncating `out` back to `at`) with frame_too_large
/// when the frame exceeds frame_max (0 = no limit but the u32 size field).
std::size_t begin_frame(std::vector<std::uint8_t>& out, frame_type type, std::uint16_t channel);
/// Ends the frame begin_frame started at `at` (see begin_frame).
[[nodiscard]] std::error_code end_frame(std::vector<std::uint8_t>& out, std::size_t at,
                                        std::uint32_t frame_max);

/// Appends the heartbeat frame: 08 0000 00000000 CE.
void encode_heartbeat(std::vector<std::uint8_t>& out);

/// Appends a content for `channel`: one header frame (class basic, body
/// size, properties) and the body split into frames of at most
/// frame_max - 8 bytes; an empty body gets no body frame. frame_max 0 means
/// no limit (one body frame, up to the u32 size field).
/// Errors (nothing appended): invalid_value for a frame_max in 1..4095;
/// string_too_long / table_too_large from the properties; frame_too_large
/// when the header frame alone exceeds frame_max. `detail`, when given,
/// receives the one-line explanation.
[[nodiscard]] std::error_code encode_content(std::vector<std::uint8_t>& out,
                                             std::uint16_t channel,
                                             const basic_properties& properties,
                                             std::span<const std::uint8_t> body,
                                             std::uint32_t frame_max,
                                             std::string* detail = nullptr);

}  // namespace tarry::amqp::wire
