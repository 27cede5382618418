// Big-endian writing of AMQP primitive types, appended to a byte vector.
//
// byte_writer appends to a std::vector<std::uint8_t> it does not own (the
// caller keeps it alive). Values that cannot be encoded (a shortstr over 255
// bytes, a length over 4 GiB) record a sticky errc and a detail instead of
// throwing; the caller checks ok() once at the end and must discard the
// output on failure. Not thread-safe.
#pragma once

#include "tarry/amqp/wire/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tarry::amqp::wire {

/// Appends AMQP's big-endian types to a vector it does not own; a value
/// that cannot be encoded records a sticky failure (see this header's
/// opening comment). Not thread-safe.
class byte_writer {
public:
    /// Appends to `out`, which must outlive the writer.
    explicit byte_writer(std::vector<std::uint8_t>& out) noexcept : out_(out) {}

    /// Appends v, big-endian; the signed ones two's complement.
    ///@{
    void u8(std::uint8_t v) { out_.push_back(v); }
    void u16(std::uint16_t v) { write_be(v, 2); }
    void u32(std::uint32_t v) { write_be(v, 4); }
    void u64(std::uint64_t v) { write_be(v, 8); }
    void i8(std::int8_t v) { u8(static_cast<std::uint8_t>(v)); }
    void i16(std::int16_t v) { u16(static_cast<std::uint16_t>(v)); }
    void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
    ///@}
    /// Appends v as an IEEE 754 single or double, big-endian.
    ///@{
    void f32(float v) {
        std::uint32_t raw;
        std::memcpy(&raw, &v, sizeof raw);
        u32(raw);
    }
    void f64(double v) {
        std::uint64_t raw;
        std::memcpy(&raw, &v, sizeof raw);
        u64(raw);
    }
    ///@}

    /// Appends the bytes as they are (no length).
    ///@{
    void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
    void bytes(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
    ///@}

    /// Appends a shortstr: u8 length + bytes. Over 255 bytes: appends
    /// nothing and fails with errc::string_too_long.
    void shortstr(std::string_view s) {
        if (s.size() > 255) {
            fail(errc::string_too_long,
                 "shortstr of " + std::to_string(s.size()) + " bytes (at most 255)");
            return;
        }
        u8(static_cast<std::uint8_t>(s.size()));
        bytes(s);
    }
    /// Appends a longstr: u32 length + bytes. Over 4 GiB: appends nothing
    /// and fails with errc::string_too_long.
    void longstr(std::string_view s) {
        if (s.size() > std::numeric_limits<std::uint32_t>::max()) {
            fail(errc::string_too_long, "longstr over 4 GiB");
            return;
        }
        u32(static_cast<std::uint32_t>(s.size()));
        bytes(s);
    }

    /// Reserves a u32 length slot; returns its offset for patch_u32().
    std::size_t reserve_u32() {
        const std::size_t at = out_.size();
        u32(0);
        return at;
    }
    /// Overwrites the u32 at `at` (from reserve_u32) with v.
    void patch_u32(std::size_t at, std::uint32_t v) noexcept {
        for (int i = 3; i >= 0; --i) {
            out_[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v);
            v >>= 8;
        }
    }

    /// Records the first failure; later calls keep the first one.
    void fail(errc code, std::string detail) {
        if (!error_) {
            error_ = code;
            detail_ = std::move(detail);
        }
    }

    /// True until a value fails to encode.
    bool ok() const noexcept { return !error_; }
    /// The first failure's code; empty while ok().
    std::error_code error() const noexcept { return error_; }
    /// A one-line explanation of the first failure.
    const std::string& detail() const noexcept { return detail_; }
    /// The vector's size: every byte in it, those before this writer included.
    std::size_t size() const noexcept { return out_.size(); }
    /// The vector written to.
    std::vector<std::uint8_t>& buffer() noexcept { return out_; }

private:
    void write_be(std::uint64_t v, int n) {
        for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
    }

    std::vector<std::uint8_t>& out_;
    std::error_code error_;
    std::string detail_;
};

}  // namespace tarry::amqp::wire
