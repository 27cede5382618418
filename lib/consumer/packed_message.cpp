// Packing a held job's message into one allocation (see the header).
#include "packed_message.hpp"

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/properties.hpp"

#include <cstring>
#include <stdexcept>
#include <utility>

namespace tarry::detail {

packed_message::packed_message(packed_message&& other) noexcept : p_(std::exchange(other.p_, 0)) {}

packed_message& packed_message::operator=(packed_message&& other) noexcept {
    if (this != &other) {
        reset();
        p_ = std::exchange(other.p_, 0);
    }
    return *this;
}

packed_message::~packed_message() { reset(); }

void packed_message::reset() noexcept {
    if (p_ == 0) return;
    if (p_ & kept_tag) {
        delete reinterpret_cast<amqp::message*>(p_ & ~kept_tag);
    } else {
        delete[] reinterpret_cast<std::uint8_t*>(p_);
    }
    p_ = 0;
}

packed_message packed_message::pack(const amqp::message& m) {
    std::vector<std::uint8_t> props;
    amqp::wire::byte_writer w(props);
    amqp::wire::encode_properties(w, m.properties);
    if (w.error()) throw std::invalid_argument("cannot pack a message's properties: " + w.error().message());
    // Encoded properties fit in one content header frame, far below 4 GiB.
    const auto props_size = static_cast<std::uint32_t>(props.size());
    const std::uint64_t body_size = m.body.size();
    auto* at = new std::uint8_t[header_size + props.size() + m.body.size()];
    packed_message p;
    p.p_ = reinterpret_cast<std::uintptr_t>(at);
    std::memcpy(at, &props_size, sizeof props_size);
    std::memcpy(at + sizeof props_size, &body_size, sizeof body_size);
    at += header_size;
    if (!props.empty()) std::memcpy(at, props.data(), props.size());
    if (!m.body.empty()) std::memcpy(at + props.size(), m.body.data(), m.body.size());
    return p;
}

packed_message packed_message::keep(amqp::message&& m) {
    static_assert(alignof(amqp::message) >= 2, "the low bit of its address tags the kept form");
    packed_message p;
    p.p_ = reinterpret_cast<std::uintptr_t>(new amqp::message(std::move(m))) | kept_tag;
    return p;
}

const amqp::message* packed_message::kept() const noexcept {
    return (p_ & kept_tag) ? reinterpret_cast<const amqp::message*>(p_ & ~kept_tag) : nullptr;
}

const std::uint8_t* packed_message::packed_bytes() const noexcept {
    return (p_ & kept_tag) ? nullptr : reinterpret_cast<const std::uint8_t*>(p_);
}

std::uint32_t packed_message::properties_size() const noexcept {
    std::uint32_t n = 0;
    if (const auto* b = packed_bytes()) std::memcpy(&n, b, sizeof n);
    return n;
}

std::uint64_t packed_message::body_size() const noexcept {
    std::uint64_t n = 0;
    if (const auto* b = packed_bytes()) std::memcpy(&n, b + sizeof(std::uint32_t), sizeof n);
    return n;
}

std::size_t packed_message::size() const noexcept {
    if (const auto* m = kept()) return m->body.size();
    return properties_size() + static_cast<std::size_t>(body_size());
}

amqp::basic_properties packed_message::properties() const {
    if (const auto* m = kept()) return m->properties;
    const auto* b = packed_bytes();
    if (!b) return {};
    amqp::wire::byte_reader r({b + header_size, properties_size()});
    return amqp::wire::decode_properties(r);
}

std::optional<std::string> packed_message::message_id() const {
    if (const auto* m = kept()) return m->properties.message_id;
    const auto* b = packed_bytes();
    if (!b) return std::nullopt;
    namespace f = amqp::wire::property_flag;
    amqp::wire::byte_reader r({b + header_size, properties_size()});
    const std::uint16_t flags = r.u16();
    if (!(flags & f::message_id)) return std::nullopt;
    // The properties before message_id, in their wire order.
    for (const std::uint16_t bit : {f::content_type, f::content_encoding}) {
        if (flags & bit) r.shortstr_view();
    }
    if (flags & f::headers) r.longstr_view();  // a table: its size, then its bytes
    if (flags & f::delivery_mode) r.u8();
    if (flags & f::priority) r.u8();
    for (const std::uint16_t bit : {f::correlation_id, f::reply_to, f::expiration}) {
        if (flags & bit) r.shortstr_view();
    }
    std::string id = r.shortstr();
    if (!r.ok()) return std::nullopt;  // packed by us from decoded properties: not expected
    return id;
}

std::string_view packed_message::body() const noexcept {
    if (const auto* m = kept()) return m->body_view();
    const auto* b = packed_bytes();
    if (!b) return {};
    return {reinterpret_cast<const char*>(b) + header_size + properties_size(),
            static_cast<std::size_t>(body_size())};
}

amqp::message packed_message::unpack() const {
    if (const auto* m = kept()) return *m;
    amqp::message m;
    m.properties = properties();
    const auto b = body();
    m.body.assign(b.begin(), b.end());
    return m;
}

}  // namespace tarry::detail
