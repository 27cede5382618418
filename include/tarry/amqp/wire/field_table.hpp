// AMQP field tables and arrays, with the value types RabbitMQ reads and writes.
//
// The tags follow RabbitMQ's errata, not the 0-9-1 text: 's' is a signed
// 16-bit integer (never the spec's short string), 'l' a signed 64-bit
// integer, 'A' an array whose u32 length counts bytes. 'L' (int64) is read
// but written as 'l'. Plain value types: copyable, no shared state, no
// thread-safety beyond that of std::vector.
#pragma once

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tarry::amqp::wire {

/// 'D': value / 10^scale. RabbitMQ reads the value as a 32-bit unsigned integer.
struct decimal_value {
    std::uint8_t scale = 0;   ///< decimal places
    std::uint32_t value = 0;  ///< the digits, unscaled
    /// Equal when scale and value both are (no normalizing: 10 at scale 1
    /// is not 1 at scale 0).
    friend bool operator==(const decimal_value&, const decimal_value&) = default;
};

/// 'T': seconds since the Unix epoch (u64).
struct timestamp_value {
    std::uint64_t seconds = 0;  ///< since the Unix epoch
    /// Equal when the seconds are.
    friend bool operator==(const timestamp_value&, const timestamp_value&) = default;
};

/// 'V': no value.
struct void_value {
    /// Always equal.
    friend bool operator==(const void_value&, const void_value&) = default;
};

/// 'x': raw bytes (RabbitMQ's byte array).
struct byte_array {
    std::vector<std::uint8_t> bytes;  ///< the bytes, as they are
    /// Equal when the bytes are.
    friend bool operator==(const byte_array&, const byte_array&) = default;
};

struct field_value;
struct field_entry;

/// 'F': an ordered list of (name, value) pairs. Names are shortstr (≤ 255
/// bytes). Order is kept as decoded or inserted; duplicate names are kept as
/// they came (find() returns the first).
class field_table {
public:
    field_table() = default;
    /// These entries in this order, duplicate names kept.
    field_table(std::initializer_list<field_entry> entries);

    /// The first value named `name`, or nullptr. The pointer is valid until
    /// the table is next modified.
    const field_value* find(std::string_view name) const noexcept;
    /// The same, to modify the value in place.
    field_value* find(std::string_view name) noexcept;
    /// Replaces the first value named `name`, or appends it.
    void set(std::string name, field_value value);
    /// Removes every entry named `name`; returns how many were removed.
    std::size_t erase(std::string_view name);

    /// The entries in order.
    const std::vector<field_entry>& entries() const noexcept { return entries_; }
    /// The entries in order, to modify as a vector.
    std::vector<field_entry>& entries() noexcept { return entries_; }
    /// True when it has no entry.
    bool empty() const noexcept { return entries_.empty(); }
    /// How many entries it has, duplicates counted.
    std::size_t size() const noexcept;

    friend bool operator==(const field_table& a, const field_table& b);

private:
    std::vector<field_entry> entries_;
};

/// Equal when both hold equal entries in the same order (names and values).
bool operator==(const field_table& a, const field_table& b);

/// 'A': values in order, each with its own tag.
using field_array = std::vector<field_value>;

/// One field value. The alternative says the wire tag it is written with:
///   void_value 'V', bool 't', int8 'b', uint8 'B', int16 's', uint16 'u',
///   int32 'I', uint32 'i', int64 'l', float 'f', double 'd',
///   decimal_value 'D', std::string 'S' (longstr, any bytes),
///   timestamp_value 'T', field_array 'A', field_table 'F', byte_array 'x'.
struct field_value {
    /// Every alternative, in the order listed above.
    using variant_type =
        std::variant<void_value, bool, std::int8_t, std::uint8_t, std::int16_t, std::uint16_t,
                     std::int32_t, std::uint32_t, std::int64_t, float, double, decimal_value,
                     std::string, timestamp_value, field_array, field_table, byte_array>;
    variant_type value;  ///< the value; void_value when default-constructed

    field_value() = default;
    /// Any value one of the alternatives is constructible from (std::string
    /// for a std::string, int8 for a std::int8_t, ...).
    template <class T>
        requires std::is_constructible_v<variant_type, T&&> &&
                 (!std::is_same_v<std::remove_cvref_t<T>, field_value>)
    field_value(T&& v) : value(std::forward<T>(v)) {}
    /// A C string is a longstr, not a bool.
    field_value(const char* s);

    /// The value as a T, or nullptr when it holds another alternative.
    template <class T>
    const T* get_if() const noexcept { return std::get_if<T>(&value); }

    /// Equal when both hold the same alternative with equal values.
    friend bool operator==(const field_value&, const field_value&) = default;
};

/// One (name, value) pair of a field_table.
struct field_entry {
    std::string name;    ///< shortstr on the wire: at most 255 bytes
    field_value value;   ///< its value
    /// Equal when names and values are.
    friend bool operator==(const field_entry&, const field_entry&) = default;
};

// Defined here, where field_entry is complete: clang instantiates the
// constexpr members of std::vector<field_entry> at their first use.
inline field_value::field_value(const char* s) : value(std::string(s)) {}
inline std::size_t field_table::size() const noexcept { return entries_.size(); }

/// Limits that keep a decoder's stack and memory bounded on hostile input.
struct table_limits {
    /// Tables and arrays nested deeper than this fail with errc::table_too_deep
    /// (the outermost table or array is depth 1).
    std::size_t max_depth = 32;
    /// A table or array whose byte length exceeds this fails with
    /// errc::table_too_large (a frame bounds it anyway; this bounds it earlier).
    std::uint32_t max_bytes = 16u * 1024 * 1024;
};

/// Appends a table (u32 byte length + entries). Fails the writer with
/// string_too_long for a name over 255 bytes, table_too_large over 4 GiB.
void encode_table(byte_writer& w, const field_table& t);
/// Appends an array (u32 byte length + tagged values).
void encode_array(byte_writer& w, const field_array& a);
/// Appends one tag + value.
void encode_field_value(byte_writer& w, const field_value& v);

/// Reads a table; on malformed input fails the reader (truncated,
/// bad_field_type, table_too_deep, table_too_large) and returns what was
/// read so far. Never reads out of bounds; allocation is bounded by the input.
field_table decode_table(byte_reader& r, const table_limits& limits = {});
/// Reads an array, with the same failures and bounds as decode_table.
field_array decode_array(byte_reader& r, const table_limits& limits = {});

/// The wire tag an alternative is written with (e.g. 'd' for double).
char field_tag(const field_value& v) noexcept;

/// The value of an integer field (int8 to int64, uint8 to uint32: each
/// fits), or nullopt for any other type, bool and timestamp included.
std::optional<std::int64_t> integer_of(const field_value& v) noexcept;

}  // namespace tarry::amqp::wire
