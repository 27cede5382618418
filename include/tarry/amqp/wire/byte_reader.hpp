// Bounds-checked big-endian reading of AMQP primitive types from a byte span.
//
// byte_reader never reads outside its span and never throws. The first
// failure is sticky: it records an errc and a one-line detail, and every
// later read returns a zero value, so a decoder can read a whole structure
// and check ok() once at the end. Not thread-safe; cheap to copy.
#pragma once

#include "tarry/amqp/wire/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace tarry::amqp::wire {

/// Reads AMQP's big-endian types from a span it does not own; the first
/// failure is sticky (see this header's opening comment). Not thread-safe;
/// cheap to copy.
class byte_reader {
public:
    /// Reads `bytes`, which must outlive the reader and every view it hands out.
    explicit byte_reader(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

    /// The next integer of that width, big-endian; the signed ones two's
    /// complement. 0 when too few bytes are left (errc::truncated) or an
    /// earlier read failed.
    ///@{
    std::uint8_t u8() noexcept { return static_cast<std::uint8_t>(read_be(1)); }
    std::uint16_t u16() noexcept { return static_cast<std::uint16_t>(read_be(2)); }
    std::uint32_t u32() noexcept { return static_cast<std::uint32_t>(read_be(4)); }
    std::uint64_t u64() noexcept { return read_be(8); }
    std::int8_t i8() noexcept { return static_cast<std::int8_t>(u8()); }
    std::int16_t i16() noexcept { return static_cast<std::int16_t>(u16()); }
    std::int32_t i32() noexcept { return static_cast<std::int32_t>(u32()); }
    std::int64_t i64() noexcept { return static_cast<std::int64_t>(u64()); }
    ///@}

    /// The next IEEE 754 single or double, big-endian; 0 on failure, as the
    /// integers.
    ///@{
    float f32() noexcept {
        const std::uint32_t raw = u32();
        float v;
        std::memcpy(&v, &raw, sizeof v);
        return v;
    }
    double f64() noexcept {
        const std::uint64_t raw = u64();
        double v;
        std::memcpy(&v, &raw, sizeof v);
        return v;
    }
    ///@}

    /// The next n bytes as a view into the input (empty on failure).
    std::span<const std::uint8_t> bytes(std::size_t n) noexcept {
        if (!take(n, "bytes")) return {};
        return bytes_.subspan(pos_ - n, n);
    }
    /// shortstr: u8 length + bytes. The view points into the input.
    std::string_view shortstr_view() noexcept { return as_view(bytes(u8())); }
    /// longstr: u32 length + bytes. The view points into the input.
    std::string_view longstr_view() noexcept { return as_view(bytes(u32())); }
    /// shortstr, copied (empty on failure).
    std::string shortstr() { return std::string(shortstr_view()); }
    /// longstr, copied (empty on failure).
    std::string longstr() { return std::string(longstr_view()); }

    /// Records the first failure; later calls keep the first one.
    void fail(errc code, std::string detail) {
        if (!error_) {
            error_ = code;
            detail_ = std::move(detail);
        }
        pos_ = bytes_.size();
    }

    /// True until a read fails.
    bool ok() const noexcept { return !error_; }
    /// The first failure's code; empty while ok().
    std::error_code error() const noexcept { return error_; }
    /// A one-line explanation of the first failure, e.g. "field 'x': tag 'Z'".
    const std::string& detail() const noexcept { return detail_; }

    /// Bytes read so far; the span's size once a read failed.
    std::size_t position() const noexcept { return pos_; }
    /// Bytes left to read; 0 once a read failed.
    std::size_t remaining() const noexcept { return bytes_.size() - pos_; }
    /// True when every byte was read, or a read failed.
    bool at_end() const noexcept { return pos_ == bytes_.size(); }

private:
    static std::string_view as_view(std::span<const std::uint8_t> s) noexcept {
        return {reinterpret_cast<const char*>(s.data()), s.size()};
    }

    bool take(std::size_t n, const char* what) noexcept {
        if (error_) return false;
        if (n > remaining()) {
            error_ = errc::truncated;
            try {
                detail_ = std::string("need ") + std::to_string(n) + " bytes for " + what +
                          ", have " + std::to_string(remaining());
            } catch (...) {
            }
            pos_ = bytes_.size();
            return false;
        }
        pos_ += n;
        return true;
    }

    std::uint64_t read_be(std::size_t n) noexcept {
        if (!take(n, "an integer")) return 0;
        std::uint64_t v = 0;
        for (std::size_t i = pos_ - n; i < pos_; ++i) v = (v << 8) | bytes_[i];
        return v;
    }

    std::span<const std::uint8_t> bytes_;
    std::size_t pos_ = 0;
    std::error_code error_;
    std::string detail_;
};

}  // namespace tarry::amqp::wire
