// Test helpers: bytes from and to hex text, and decoding shortcuts.
#pragma once

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/error.hpp"

#include "../text_contains.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

// Failed checks show an error_code by its message, not by its number.
template <>
struct doctest::StringMaker<std::error_code> {
    static doctest::String convert(const std::error_code& e) {
        if (!e) return "no error";
        return (e.category().name() + std::string(": ") + e.message()).c_str();
    }
};

namespace wire_test {

using bytes = std::vector<std::uint8_t>;

/// "00 0a ff" → {0x00, 0x0a, 0xff}; spaces are ignored.
inline bytes hex(std::string_view text) {
    bytes out;
    int hi = -1;
    for (char c : text) {
        int v;
        if (c >= '0' && c <= '9') v = c - '0';
        else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
        else continue;
        if (hi < 0) {
            hi = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(hi * 16 + v));
            hi = -1;
        }
    }
    return out;
}

/// {0x00, 0x0a} → "00 0a".
inline std::string to_hex(std::span<const std::uint8_t> b) {
    std::string s;
    for (std::uint8_t c : b) {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%02x", c);
        if (!s.empty()) s += ' ';
        s += buf;
    }
    return s;
}

using unit_test_text::contains;  ///< (for checking error details)

/// The bytes of a string (for payloads and bodies).
inline bytes of(std::string_view s) { return bytes(s.begin(), s.end()); }

/// Runs an encoder on a fresh buffer; requires it to succeed.
template <class Fn>
bytes encoded(Fn&& fn) {
    bytes out;
    tarry::amqp::wire::byte_writer w(out);
    fn(w);
    return w.ok() ? out : bytes{};
}

}  // namespace wire_test
