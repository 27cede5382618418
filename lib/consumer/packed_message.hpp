// A held job's message in one allocation: a 12-byte size header, its
// properties as encoded on the wire, then its body. A decoded amqp::message
// costs several hundred bytes of optionals and a header table besides the
// body; a held job costs what the broker sent. The handle is one pointer,
// so the held job that owns it stays small. Unpacked when the job runs or is
// republished.
#pragma once

#include "tarry/amqp/message.hpp"

#include <cstdint>
#include <memory>
#include <string_view>

namespace tarry::detail {

class packed_message {
public:
    packed_message() = default;
    /// Encodes m's properties and copies its body. Throws std::invalid_argument
    /// if the properties cannot be encoded (they came from a decoder, so they can).
    static packed_message pack(const amqp::message& m);
    /// The message again, equal to the one packed.
    amqp::message unpack() const;
    /// Its properties alone.
    amqp::basic_properties properties() const;
    std::string_view body() const noexcept;
    /// Bytes of properties and body (the allocation less its size header).
    std::size_t size() const noexcept;

private:
    static constexpr std::size_t header_size = 12;  ///< u32 properties size, u64 body size
    std::uint32_t properties_size() const noexcept;
    std::uint64_t body_size() const noexcept;

    std::unique_ptr<std::uint8_t[]> data_;
};

}  // namespace tarry::detail
