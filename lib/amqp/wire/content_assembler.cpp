// Content reassembly state machine.
#include "tarry/amqp/wire/content_assembler.hpp"

#include <algorithm>
#include <utility>

namespace tarry::amqp::wire {
namespace {

// Reserve at most this much up front; a larger body grows as it arrives,
// so a header announcing a huge body costs nothing until the bytes come.
constexpr std::uint64_t max_initial_reserve = 1024 * 1024;

}  // namespace

content_assembler::content_assembler(std::uint16_t channel, std::uint64_t max_body_size,
                                     table_limits limits)
    : channel_(channel), max_body_size_(max_body_size), limits_(limits) {}

void content_assembler::reset() noexcept {
    state_ = state::idle;
    body_size_ = 0;
    received_ = 0;
    keep_body_ = true;
    content_ = {};
    error_.clear();
    detail_.clear();
}

std::error_code content_assembler::fail(errc code, std::string detail) {
    if (!error_) {
        error_ = code;
        detail_ = std::move(detail);
    }
    state_ = state::failed;
    content_ = {};
    return error_;
}

std::error_code content_assembler::expect_content() {
    if (state_ == state::failed) return error_;
    if (state_ != state::idle)
        return fail(errc::unexpected_frame,
                    "channel " + std::to_string(channel_) +
                        ": a content-bearing method arrived while the previous content is " +
                        (state_ == state::ready ? "not yet taken" : "incomplete"));
    state_ = state::want_header;
    return {};
}

std::error_code content_assembler::on_frame(const frame_view& f) {
    if (state_ == state::failed) return error_;
    if (f.channel != channel_)
        return fail(errc::unexpected_frame, std::string(to_string(f.type)) + " frame for channel " +
                                                std::to_string(f.channel) +
                                                " given to the assembler of channel " +
                                                std::to_string(channel_));
    switch (state_) {
    case state::want_header:
        if (f.type == frame_type::header) return on_header(f);
        return fail(errc::unexpected_frame,
                    "channel " + std::to_string(channel_) + ": " + to_string(f.type) +
                        " frame where the content header was due");
    case state::want_body:
        if (f.type == frame_type::body) return on_body(f);
        return fail(errc::unexpected_frame,
                    "channel " + std::to_string(channel_) + ": " + to_string(f.type) +
                        " frame after " + std::to_string(received()) + " of " +
                        std::to_string(body_size_) + " body bytes");
    case state::idle:
    case state::ready:
        if (f.type == frame_type::header || f.type == frame_type::body)
            return fail(errc::unexpected_frame, "channel " + std::to_string(channel_) + ": " +
                                                    to_string(f.type) +
                                                    " frame with no content-bearing method before it");
        return {};  // methods between contents are the caller's business
    case state::failed: break;
    }
    return error_;
}

void content_assembler::mark_unreadable(errc code, const std::string& detail) {
    if (!content_.unreadable) {
        content_.unreadable.emplace();
        content_.unreadable->error = code;
        content_.unreadable->detail = detail;
    } else {
        content_.unreadable->detail += "; " + detail;
    }
    content_.unreadable->body_size = body_size_;
}

std::error_code content_assembler::on_header(const frame_view& f) {
    byte_reader r(f.payload);
    const content_header h = decode_content_header_fields(r);
    if (!r.ok()) {
        const auto code = static_cast<errc>(r.error().value());
        return fail(code, "channel " + std::to_string(channel_) + ": content header: " +
                              r.detail());
    }
    body_size_ = h.body_size;
    received_ = 0;
    content_ = {};

    // From here on the framing is known to be sound (the body frames that
    // follow carry body_size bytes); what is wrong now is the message's.
    const auto block = f.payload.subspan(r.position());
    byte_reader pr(block);
    basic_properties properties = decode_property_block(pr, limits_);
    if (pr.ok()) {
        content_.properties = std::move(properties);
    } else {
        mark_unreadable(static_cast<errc>(pr.error().value()),
                        "properties do not decode: " + pr.detail());
        content_.unreadable->raw_properties.emplace(block.begin(), block.end());
    }
    keep_body_ = body_size_ <= max_body_size_;
    if (keep_body_) {
        content_.body.reserve(static_cast<std::size_t>(std::min(body_size_, max_initial_reserve)));
    } else {
        mark_unreadable(errc::body_too_large, "body of " + std::to_string(body_size_) +
                                                  " bytes above max_body_size " +
                                                  std::to_string(max_body_size_) + ", not kept");
        content_.unreadable->body_dropped = true;
    }
    state_ = body_size_ == 0 ? state::ready : state::want_body;
    return {};
}

std::error_code content_assembler::on_body(const frame_view& f) {
    const std::uint64_t left = body_size_ - received_;
    if (f.payload.size() > left)
        return fail(errc::body_too_large, "channel " + std::to_string(channel_) +
                                              ": body frame of " +
                                              std::to_string(f.payload.size()) + " bytes after " +
                                              std::to_string(received_) + " of " +
                                              std::to_string(body_size_) + " (" +
                                              std::to_string(left) + " left)");
    if (keep_body_) content_.body.insert(content_.body.end(), f.payload.begin(), f.payload.end());
    received_ += f.payload.size();
    if (received_ == body_size_) state_ = state::ready;
    return {};
}

message_content content_assembler::take() {
    if (state_ != state::ready) return {};
    message_content out = std::move(content_);
    content_ = {};
    body_size_ = 0;
    received_ = 0;
    keep_body_ = true;
    state_ = state::idle;
    return out;
}

}  // namespace tarry::amqp::wire
