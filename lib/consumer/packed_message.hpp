// A held job's message in one allocation: its properties as encoded on the
// wire, then its body. A decoded amqp::message costs several hundred bytes
// of optionals and a header table besides the body; a held job costs what
// the broker sent. Unpacked when the job runs or is republished.
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
    /// Bytes allocated (properties + body).
    std::size_t size() const noexcept { return properties_size_ + body_size_; }

private:
    std::unique_ptr<std::uint8_t[]> data_;
    std::uint32_t properties_size_ = 0;
    std::uint64_t body_size_ = 0;
};

}  // namespace tarry::detail
