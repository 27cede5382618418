// Error codes of the AMQP 0-9-1 wire codec.
//
// Every decoder and encoder in tarry::amqp::wire reports failure as a
// std::error_code in the "tarry.amqp.wire" category; none throws. Where a
// person needs more than the code (which field, which tag), the decoder also
// leaves a one-line detail in its byte_reader / byte_writer (see there).
#pragma once

#include <system_error>

namespace tarry::amqp::wire {

/// What was wrong with bytes on the wire (decoding) or with a value that
/// cannot be put on the wire (encoding). Zero is never used.
enum class errc {
    truncated = 1,          ///< input ends before the structure does
    bad_protocol_header,    ///< not "AMQP" 0 0 9 1
    unknown_frame_type,     ///< frame type other than 1, 2, 3, 8
    bad_frame_end,          ///< frame-end octet is not 0xCE
    frame_too_large,        ///< frame size above the negotiated frame_max
    bad_heartbeat,          ///< heartbeat frame on a channel or with a payload
    unknown_method,         ///< class-id / method-id pair we do not know
    trailing_bytes,         ///< a method or header frame has bytes after its last field
    bad_field_type,         ///< unknown type tag in a field table or array
    table_too_deep,         ///< tables/arrays nested beyond the depth limit
    table_too_large,        ///< table or array above the byte limit
    string_too_long,        ///< shortstr over 255 bytes, longstr over 4 GiB (encoding)
    bad_content_header,     ///< class-id or weight of a content header is wrong
    unexpected_frame,       ///< a frame arrives where the protocol forbids it
    body_too_large,         ///< content body exceeds the declared or allowed size
    invalid_value,          ///< a value is out of range for its field
};

/// The category of errc; its name() is "tarry.amqp.wire".
const std::error_category& wire_category() noexcept;

/// `e` as a std::error_code of wire_category(); found by argument-dependent
/// lookup, so an errc converts to std::error_code.
inline std::error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), wire_category()};
}

}  // namespace tarry::amqp::wire

template <>
struct std::is_error_code_enum<tarry::amqp::wire::errc> : std::true_type {};
