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
    packed_message p;
    p.properties_size_ = static_cast<std::uint32_t>(props.size());
    p.body_size_ = m.body.size();
    p.data_ = std::make_unique_for_overwrite<std::uint8_t[]>(p.size());
    if (!props.empty()) std::memcpy(p.data_.get(), props.data(), props.size());
    if (!m.body.empty()) std::memcpy(p.data_.get() + props.size(), m.body.data(), m.body.size());
    return p;
}

amqp::basic_properties packed_message::properties() const {
    if (!data_) return {};
    amqp::wire::byte_reader r({data_.get(), properties_size_});
    return amqp::wire::decode_properties(r);
}

std::string_view packed_message::body() const noexcept {
    if (!data_) return {};
    return {reinterpret_cast<const char*>(data_.get()) + properties_size_, static_cast<std::size_t>(body_size_)};
}

amqp::message packed_message::unpack() const {
    amqp::message m;
    m.properties = properties();
    const auto b = body();
    m.body.assign(b.begin(), b.end());
    return m;
}

}  // namespace tarry::detail
