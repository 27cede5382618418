#include "tarry/amqp/wire/error.hpp"

namespace tarry::amqp::wire {
namespace {

class wire_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tarry.amqp.wire"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
        case errc::truncated: return "input ends before the structure does";
        case errc::bad_protocol_header: return "bad AMQP protocol header";
        case errc::unknown_frame_type: return "unknown frame type";
        case errc::bad_frame_end: return "frame-end octet is not 0xCE";
        case errc::frame_too_large: return "frame larger than the negotiated frame_max";
        case errc::bad_heartbeat: return "malformed heartbeat frame";
        case errc::unknown_method: return "unknown class or method id";
        case errc::trailing_bytes: return "unexpected bytes after the last field";
        case errc::bad_field_type: return "unknown field type tag";
        case errc::table_too_deep: return "field tables nested too deeply";
        case errc::table_too_large: return "field table or array too large";
        case errc::string_too_long: return "string too long for its wire type";
        case errc::bad_content_header: return "malformed content header";
        case errc::unexpected_frame: return "frame not allowed here by the protocol";
        case errc::body_too_large: return "content body larger than declared or allowed";
        case errc::invalid_value: return "value out of range for its field";
        }
        return "unknown tarry.amqp.wire error " + std::to_string(ev);
    }
};

}  // namespace

const std::error_category& wire_category() noexcept {
    static const wire_category_impl instance;
    return instance;
}

}  // namespace tarry::amqp::wire
