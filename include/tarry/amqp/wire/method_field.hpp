// How a method struct describes its arguments to the generic codec.
//
// Every method struct in tarry/amqp/wire/methods/ exposes a static constexpr
// fields() returning a std::tuple of method_field, one per argument in the
// spec's order: the spec's argument name, its wire type, and the member
// that holds it. One encoder and one decoder walk that list (see
// methods.hpp), and the spec test compares it with the AMQP XML. The wire
// type fixes the member's C++ type (wire_value_t), checked at compile time.
//
// Every member has a default initializer (`{}` at least), so a designated
// initializer that names only some arguments, e.g.
// queue_declare{.queue = "jobs", .durable = true}, compiles without
// missing-initializer warnings.
#pragma once

#include "tarry/amqp/wire/field_table.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

namespace tarry::amqp::wire {

/// The argument types of AMQP 0-9-1 methods. Integers are unsigned and
/// big-endian; consecutive bits share one octet, first bit least significant.
enum class wire_type : std::uint8_t {
    octet,      ///< u8
    short_,     ///< u16 ("short" in the spec)
    long_,      ///< u32 ("long" in the spec)
    longlong,   ///< u64
    bit,        ///< one bit of a packed octet
    shortstr,   ///< u8 length + up to 255 bytes
    longstr,    ///< u32 length + bytes
    timestamp,  ///< u64 seconds since the Unix epoch
    table,      ///< field table
};

/// The spec's name of a wire type: "octet", "short", "long", "longlong",
/// "bit", "shortstr", "longstr", "timestamp" or "table".
constexpr std::string_view to_string(wire_type t) noexcept {
    switch (t) {
    case wire_type::octet: return "octet";
    case wire_type::short_: return "short";
    case wire_type::long_: return "long";
    case wire_type::longlong: return "longlong";
    case wire_type::bit: return "bit";
    case wire_type::shortstr: return "shortstr";
    case wire_type::longstr: return "longstr";
    case wire_type::timestamp: return "timestamp";
    case wire_type::table: return "table";
    }
    return "?";
}

/// The C++ type a member of wire type T has (`type`): std::uint8_t,
/// std::uint16_t, std::uint32_t, std::uint64_t for longlong and timestamp,
/// bool for bit, std::string for both strings, field_table for table.
template <wire_type T> struct wire_value;
/// @cond
template <> struct wire_value<wire_type::octet> { using type = std::uint8_t; };
template <> struct wire_value<wire_type::short_> { using type = std::uint16_t; };
template <> struct wire_value<wire_type::long_> { using type = std::uint32_t; };
template <> struct wire_value<wire_type::longlong> { using type = std::uint64_t; };
template <> struct wire_value<wire_type::bit> { using type = bool; };
template <> struct wire_value<wire_type::shortstr> { using type = std::string; };
template <> struct wire_value<wire_type::longstr> { using type = std::string; };
template <> struct wire_value<wire_type::timestamp> { using type = std::uint64_t; };
template <> struct wire_value<wire_type::table> { using type = field_table; };
/// @endcond
/// The C++ type a member of wire type T has.
template <wire_type T> using wire_value_t = typename wire_value<T>::type;

/// One argument of method struct S: its spec name (such as "routing-key"), its
/// wire type, and the member holding it.
template <wire_type T, class S>
struct method_field {
    static constexpr wire_type type = T;  ///< its wire type
    using value_type = wire_value_t<T>;  ///< the member's C++ type
    std::string_view name;  ///< the spec's name of the argument
    value_type S::*member;  ///< the member of S that holds it
};

/// Builds a method_field; fails to compile when the member's C++ type does
/// not match wire type T.
template <wire_type T, class S>
constexpr method_field<T, S> field(std::string_view name, wire_value_t<T> S::*member) noexcept {
    return {name, member};
}

/// A string literal as a template argument (for method names of the shared
/// method templates below).
template <std::size_t N>
struct fixed_string {
    char chars[N]{};  ///< the literal, its terminating NUL included
    /// Copies the literal (implicit, so a literal converts to it).
    constexpr fixed_string(const char (&s)[N]) noexcept {
        for (std::size_t i = 0; i < N; ++i) chars[i] = s[i];
    }
    /// The literal without its NUL.
    constexpr std::string_view view() const noexcept { return {chars, N - 1}; }
};

/// What every method struct provides: ids, the spec name ("queue.declare"),
/// whether content (header + body frames) follows it, and its argument list.
template <class M>
concept amqp_method = requires {
    { M::class_id } -> std::convertible_to<std::uint16_t>;
    { M::method_id } -> std::convertible_to<std::uint16_t>;
    { M::name } -> std::convertible_to<std::string_view>;
    { M::has_content } -> std::convertible_to<bool>;
    M::fields();
};

namespace detail {

/// A method with no arguments (connection.close-ok, queue.bind-ok, ...).
/// Methods of the same shape share a template so that each is one line.
template <std::uint16_t ClassId, std::uint16_t MethodId, fixed_string Name>
struct method_without_arguments {
    static constexpr std::uint16_t class_id = ClassId, method_id = MethodId;
    static constexpr std::string_view name = Name.view();
    static constexpr bool has_content = false;

    static constexpr auto fields() { return std::tuple{}; }
    friend bool operator==(const method_without_arguments&,
                           const method_without_arguments&) = default;
};

}  // namespace detail

}  // namespace tarry::amqp::wire
