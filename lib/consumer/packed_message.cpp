// Packing a held job's message into one allocation (see the header).
#include "packed_message.hpp"

#include "tarry/amqp/wire/byte_reader.hpp"
#include "tarry/amqp/wire/byte_writer.hpp"

#include <cstring>
#include <stdexcept>

namespace tarry::detail {

packed_message packed_message::pack(const amqp::message& m) {
    std::vector<std::uint8_t> props;
    amqp::wire::byte_writer w(props);
    amqp::wire::encode_properties(w, m.properties);
    if (w.error()) throw std::invalid_argument("cannot pack a message's properties: " + w.error().message());
    // Encoded properties fit in one content header frame, far below 4 GiB.
    const auto props_size = static_cast<std::uint32_t>(props.size());
    const std::uint64_t body_size = m.body.size();
    packed_message p;
    p.data_ = std::make_unique_for_overwrite<std::uint8_t[]>(header_size + props.size() + m.body.size());
    std::uint8_t* at = p.data_.get();
    std::memcpy(at, &props_size, sizeof props_size);
    std::memcpy(at + sizeof props_size, &body_size, sizeof body_size);
    at += header_size;
    if (!props.empty()) std::memcpy(at, props.data(), props.size());
    if (!m.body.empty()) std::memcpy(at + props.size(), m.body.data(), m.body.size());
    return p;
}

std::uint32_t packed_message::properties_size() const noexcept {
    std::uint32_t n = 0;
    if (data_) std::memcpy(&n, data_.get(), sizeof n);
    return n;
}

std::uint64_t packed_message::body_size() const noexcept {
    std::uint64_t n = 0;
    if (data_) std::memcpy(&n, data_.get() + sizeof(std::uint32_t), sizeof n);
    return n;
}

std::size_t packed_message::size() const noexcept {
    return properties_size() + static_cast<std::size_t>(body_size());
}

amqp::basic_properties packed_message::properties() const {
    if (!data_) return {};
    amqp::wire::byte_reader r({data_.get() + header_size, properties_size()});
    return amqp::wire::decode_properties(r);
}

std::string_view packed_message::body() const noexcept {
    if (!data_) return {};
    return {reinterpret_cast<const char*>(data_.get()) + header_size + properties_size(),
            static_cast<std::size_t>(body_size())};
}

amqp::message packed_message::unpack() const {
    amqp::message m;
    m.properties = properties();
    const auto b = body();
    m.body.assign(b.begin(), b.end());
    return m;
}

}  // namespace tarry::detail
