// A job's message behind one pointer, in one of two forms:
// - packed, for jobs that wait (held): one allocation holding a 12-byte
//   size header, the properties as encoded on the wire, then the body. A
//   decoded amqp::message costs several hundred bytes of optionals and a
//   header table besides the body; a held job costs what the broker sent.
//   Unpacked when the job runs or is republished.
// - kept, for jobs that do not wait (due at once, refused): the decoded
//   message itself, moved to the heap, so running it neither encodes nor
//   decodes anything.
// The pointer's low bit tells the forms apart (both allocations are at
// least 2-byte aligned). Movable, not copyable; not thread-safe.
#pragma once

#include "tarry/amqp/message.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::detail {

class packed_message {
public:
    packed_message() = default;
    packed_message(packed_message&& other) noexcept;
    packed_message& operator=(packed_message&& other) noexcept;
    packed_message(const packed_message&) = delete;
    packed_message& operator=(const packed_message&) = delete;
    ~packed_message();

    /// Encodes m's properties and copies its body. Throws std::invalid_argument
    /// if the properties cannot be encoded (they came from a decoder, so they can).
    static packed_message pack(const amqp::message& m);
    /// Keeps m as it is (moved, nothing encoded).
    static packed_message keep(amqp::message&& m);

    /// The message when it is kept whole, else nullptr.
    const amqp::message* kept() const noexcept;
    /// The message again, equal to the one packed or kept.
    amqp::message unpack() const;
    /// Its properties alone.
    amqp::basic_properties properties() const;
    /// Its message_id alone: of the packed properties, only those before
    /// it are stepped over (none decoded). Empty when unset.
    std::optional<std::string> message_id() const;
    std::string_view body() const noexcept;
    /// Packed: bytes of properties and body (the allocation less its size
    /// header). Kept: the body's bytes.
    std::size_t size() const noexcept;

private:
    static constexpr std::size_t header_size = 12;  ///< u32 properties size, u64 body size
    static constexpr std::uintptr_t kept_tag = 1;
    const std::uint8_t* packed_bytes() const noexcept;
    std::uint32_t properties_size() const noexcept;
    std::uint64_t body_size() const noexcept;
    void reset() noexcept;

    std::uintptr_t p_ = 0;  ///< 0, a packed allocation, or an amqp::message* | kept_tag
};

}  // namespace tarry::detail
