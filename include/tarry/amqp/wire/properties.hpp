// basic.properties and the content-header frame payload that carries them.
//
// Plain value types and pure functions: no shared state, never throw on bad
// input (errors go into the byte_reader / byte_writer, sticky, with a detail
// naming the property). Thread-safety is that of the values themselves.
#pragma once

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/field_table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::amqp::wire {

/// The 14 properties of class basic, in wire order. An empty optional is
/// not sent (its flag bit is clear); an engaged empty string is sent.
struct basic_properties {
    std::optional<std::string> content_type;      ///< shortstr, e.g. "application/json"
    std::optional<std::string> content_encoding;  ///< shortstr, e.g. "gzip"
    std::optional<field_table> headers;           ///< application headers
    std::optional<std::uint8_t> delivery_mode;    ///< 1 transient, 2 persistent
    std::optional<std::uint8_t> priority;         ///< 0..9 in practice
    std::optional<std::string> correlation_id;    ///< ties a reply to its request
    std::optional<std::string> reply_to;          ///< where a reply should go (a queue)
    std::optional<std::string> expiration;        ///< TTL as decimal milliseconds
    std::optional<std::string> message_id;        ///< the message's id (tarry's job id)
    std::optional<std::uint64_t> timestamp;       ///< seconds since the Unix epoch
    std::optional<std::string> type;              ///< a type name, for the application
    std::optional<std::string> user_id;           ///< must equal the connection's user
    std::optional<std::string> app_id;            ///< the publishing application
    std::optional<std::string> cluster_id;        ///< deprecated, still on the wire

    /// Equal when every property is (present or not, and its value).
    friend bool operator==(const basic_properties&, const basic_properties&) = default;
};

/// The property-flags bit of each property (bit 15 first, in wire order).
/// Bit 0 is the continuation bit of the 0-9-1 text; class basic never
/// needs it, so a decoder rejects it, as it rejects bit 1 (no property).
namespace property_flag {
/// The bit of the property of that name in basic_properties.
///@{
inline constexpr std::uint16_t content_type = 0x8000;
inline constexpr std::uint16_t content_encoding = 0x4000;
inline constexpr std::uint16_t headers = 0x2000;
inline constexpr std::uint16_t delivery_mode = 0x1000;
inline constexpr std::uint16_t priority = 0x0800;
inline constexpr std::uint16_t correlation_id = 0x0400;
inline constexpr std::uint16_t reply_to = 0x0200;
inline constexpr std::uint16_t expiration = 0x0100;
inline constexpr std::uint16_t message_id = 0x0080;
inline constexpr std::uint16_t timestamp = 0x0040;
inline constexpr std::uint16_t type = 0x0020;
inline constexpr std::uint16_t user_id = 0x0010;
inline constexpr std::uint16_t app_id = 0x0008;
inline constexpr std::uint16_t cluster_id = 0x0004;
///@}
/// Every bit a basic_properties can set.
inline constexpr std::uint16_t all = 0xfffc;
}  // namespace property_flag

/// The application header `name`, or nullptr when there are no headers or
/// none of that name. The one header lookup of tarry: the ones below read
/// their type through it.
const field_value* header_of(const basic_properties& p, std::string_view name) noexcept;
/// The header `name` as an integer (integer_of: any integer type), or
/// nullopt when absent or of another type.
std::optional<std::int64_t> integer_header(const basic_properties& p, std::string_view name) noexcept;
/// The header `name` as a string (longstr), or nullptr when absent or of
/// another type. Points into `p`.
const std::string* text_header(const basic_properties& p, std::string_view name) noexcept;

/// The flags word for the properties that are present.
std::uint16_t property_flags(const basic_properties& p) noexcept;

/// Appends the flags word and the present properties. A shortstr property
/// over 255 bytes fails the writer with string_too_long (detail names it).
void encode_properties(byte_writer& w, const basic_properties& p);
/// Reads the flags word and the properties it announces. Fails the reader
/// with bad_content_header for a flags word with bit 0 (continuation) or
/// bit 1 set, and with the errors of decode_table for the headers.
basic_properties decode_properties(byte_reader& r, const table_limits& limits = {});

/// The class id of basic, the only class with content.
inline constexpr std::uint16_t basic_class_id = 60;

/// The payload of a content-header frame (frame type 2).
struct content_header {
    std::uint16_t class_id = basic_class_id;  ///< the content's class: basic
    std::uint16_t weight = 0;       ///< unused by 0-9-1, always 0
    std::uint64_t body_size = 0;    ///< total bytes in the body frames that follow
    basic_properties properties;    ///< the message's properties

    /// Equal when every field is.
    friend bool operator==(const content_header&, const content_header&) = default;
};

/// Appends a content-header payload (no frame envelope).
void encode_content_header(byte_writer& w, const content_header& h);
/// Reads a whole content-header payload: `r` must span exactly the frame's
/// payload. decode_content_header_fields, then decode_property_block.
content_header decode_content_header(byte_reader& r, const table_limits& limits = {});
/// Reads the fields before the properties (class-id, weight, body size)
/// into a content_header with no properties. Fails the reader with
/// truncated, or bad_content_header for a class other than basic (60) or a
/// non-zero weight. These fields say how the content is framed: a failure
/// here means the frames cannot be trusted.
content_header decode_content_header_fields(byte_reader& r);
/// Reads the properties that end a content-header payload: `r` must span
/// exactly them. decode_properties, then trailing_bytes when bytes are left
/// over. A failure here is about the message alone: the header's fields
/// (and so the body frames that follow) are sound.
basic_properties decode_property_block(byte_reader& r, const table_limits& limits = {});

}  // namespace tarry::amqp::wire
