// basic.properties and content-header payloads.
#include "tarry/amqp/wire/properties.hpp"

#include <cstdio>

namespace tarry::amqp::wire {
namespace {

std::string hex16(std::uint16_t v) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%04x", v);
    return buf;
}

void put_shortstr(byte_writer& w, const std::optional<std::string>& v, const char* name) {
    if (!v) return;
    if (v->size() > 255) {
        w.fail(errc::string_too_long, std::string("property ") + name + " of " +
                                          std::to_string(v->size()) + " bytes (at most 255)");
        return;
    }
    w.shortstr(*v);
}

}  // namespace

const field_value* header_of(const basic_properties& p, std::string_view name) noexcept {
    return p.headers ? p.headers->find(name) : nullptr;
}

std::optional<std::int64_t> integer_header(const basic_properties& p, std::string_view name) noexcept {
    const field_value* v = header_of(p, name);
    return v ? integer_of(*v) : std::nullopt;
}

const std::string* text_header(const basic_properties& p, std::string_view name) noexcept {
    const field_value* v = header_of(p, name);
    return v ? v->get_if<std::string>() : nullptr;
}

std::uint16_t property_flags(const basic_properties& p) noexcept {
    namespace f = property_flag;
    std::uint16_t flags = 0;
    auto mark = [&flags](bool present, std::uint16_t bit) {
        if (present) flags = static_cast<std::uint16_t>(flags | bit);
    };
    mark(p.content_type.has_value(), f::content_type);
    mark(p.content_encoding.has_value(), f::content_encoding);
    mark(p.headers.has_value(), f::headers);
    mark(p.delivery_mode.has_value(), f::delivery_mode);
    mark(p.priority.has_value(), f::priority);
    mark(p.correlation_id.has_value(), f::correlation_id);
    mark(p.reply_to.has_value(), f::reply_to);
    mark(p.expiration.has_value(), f::expiration);
    mark(p.message_id.has_value(), f::message_id);
    mark(p.timestamp.has_value(), f::timestamp);
    mark(p.type.has_value(), f::type);
    mark(p.user_id.has_value(), f::user_id);
    mark(p.app_id.has_value(), f::app_id);
    mark(p.cluster_id.has_value(), f::cluster_id);
    return flags;
}

void encode_properties(byte_writer& w, const basic_properties& p) {
    w.u16(property_flags(p));
    put_shortstr(w, p.content_type, "content_type");
    put_shortstr(w, p.content_encoding, "content_encoding");
    if (p.headers) encode_table(w, *p.headers);
    if (p.delivery_mode) w.u8(*p.delivery_mode);
    if (p.priority) w.u8(*p.priority);
    put_shortstr(w, p.correlation_id, "correlation_id");
    put_shortstr(w, p.reply_to, "reply_to");
    put_shortstr(w, p.expiration, "expiration");
    put_shortstr(w, p.message_id, "message_id");
    if (p.timestamp) w.u64(*p.timestamp);
    put_shortstr(w, p.type, "type");
    put_shortstr(w, p.user_id, "user_id");
    put_shortstr(w, p.app_id, "app_id");
    put_shortstr(w, p.cluster_id, "cluster_id");
}

basic_properties decode_properties(byte_reader& r, const table_limits& limits) {
    namespace f = property_flag;
    basic_properties p;
    const std::uint16_t flags = r.u16();
    if (!r.ok()) return p;
    if (flags & 0x0001) {
        r.fail(errc::bad_content_header, "property flags " + hex16(flags) +
                                             ": continuation bit set (basic has 14 properties)");
        return p;
    }
    if (flags & ~f::all) {
        r.fail(errc::bad_content_header,
               "property flags " + hex16(flags) + ": bit 0x0002 names no property");
        return p;
    }
    // The reader is sticky: after a failure every read yields an empty value
    // and the caller discards the result.
    auto str = [&](std::uint16_t bit, std::optional<std::string>& out) {
        if (flags & bit) out = r.shortstr();
    };
    auto octet = [&](std::uint16_t bit, std::optional<std::uint8_t>& out) {
        if (flags & bit) out = r.u8();
    };
    str(f::content_type, p.content_type);
    str(f::content_encoding, p.content_encoding);
    if (flags & f::headers) p.headers = decode_table(r, limits);
    octet(f::delivery_mode, p.delivery_mode);
    octet(f::priority, p.priority);
    str(f::correlation_id, p.correlation_id);
    str(f::reply_to, p.reply_to);
    str(f::expiration, p.expiration);
    str(f::message_id, p.message_id);
    if (flags & f::timestamp) p.timestamp = r.u64();
    str(f::type, p.type);
    str(f::user_id, p.user_id);
    str(f::app_id, p.app_id);
    str(f::cluster_id, p.cluster_id);
    return p;
}

void encode_content_header(byte_writer& w, const content_header& h) {
    w.u16(h.class_id);
    w.u16(h.weight);
    w.u64(h.body_size);
    encode_properties(w, h.properties);
}

content_header decode_content_header(byte_reader& r, const table_limits& limits) {
    content_header h = decode_content_header_fields(r);
    if (r.ok()) h.properties = decode_property_block(r, limits);
    return h;
}

content_header decode_content_header_fields(byte_reader& r) {
    content_header h;
    h.class_id = r.u16();
    h.weight = r.u16();
    h.body_size = r.u64();
    if (!r.ok()) return h;
    if (h.class_id != basic_class_id) {
        r.fail(errc::bad_content_header, "content header for class " +
                                             std::to_string(h.class_id) + " (only basic, 60)");
        return h;
    }
    if (h.weight != 0) {
        r.fail(errc::bad_content_header,
               "content header weight " + std::to_string(h.weight) + " (must be 0)");
        return h;
    }
    return h;
}

basic_properties decode_property_block(byte_reader& r, const table_limits& limits) {
    basic_properties p = decode_properties(r, limits);
    if (r.ok() && !r.at_end())
        r.fail(errc::trailing_bytes, std::to_string(r.remaining()) +
                                         " bytes after the last property of a content header");
    return p;
}

}  // namespace tarry::amqp::wire
