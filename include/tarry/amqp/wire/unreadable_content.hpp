// Why a message's content could not be read, when the frames that carried
// it were sound: the message's problem, not the connection's.
//
// A plain value. The content_assembler fills it in (properties that do not
// decode, a body above max_body_size) and hands the content on anyway, so
// its receiver can settle the message (dead-letter it) and go on; frame-level
// faults (wrong sizes, frames out of order) stay errors of the connection.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

namespace tarry::amqp::wire {

/// Why a content could not be read although its frames were sound (see
/// this header's opening comment). A plain value.
struct unreadable_content {
    /// The first thing found wrong, in the wire category: what decoding the
    /// properties failed with (bad_content_header for bad property flags,
    /// truncated, trailing_bytes, bad_field_type, table_too_deep,
    /// table_too_large, ...), or body_too_large.
    std::error_code error;
    /// One line saying everything that was wrong, such as "properties do not
    /// decode: field 'a': field table nested deeper than 32".
    std::string detail;
    /// The properties block exactly as it came (the property-flags word
    /// first) when it did not decode; the content's properties are then
    /// empty. Empty when the properties decoded.
    std::optional<std::vector<std::uint8_t>> raw_properties;
    /// The body size the content header announced.
    std::uint64_t body_size = 0;
    /// True when body_size was above the limit: the body frames were read
    /// and dropped as they came, so the content's body is empty.
    bool body_dropped = false;

    /// Equal when every field is.
    friend bool operator==(const unreadable_content&, const unreadable_content&) = default;
};

}  // namespace tarry::amqp::wire
