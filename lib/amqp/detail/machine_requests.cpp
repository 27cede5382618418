// The connection machine: requests from the user, and the per-channel
// queue that keeps one synchronous request in flight at a time.
#include "connection_machine.hpp"

#include "tarry/amqp/wire/frame.hpp"

namespace tarry::amqp::detail {

void connection_machine::complete(op_id op, std::error_code ec, std::string detail,
                                  std::optional<broker_reply> closed_by) {
    if (op == 0) return;
    ev_op_done done;
    done.id = op;
    done.ec = ec;
    done.detail = std::move(detail);
    done.closed_by = std::move(closed_by);
    events_.push_back(std::move(done));
}

channel_state* connection_machine::find(channel_ref ref) noexcept {
    const auto it = channels_.find(ref.number);
    if (it == channels_.end() || it->second->ref.serial != ref.serial) return nullptr;
    return it->second.get();
}

std::uint16_t connection_machine::free_channel_number() const noexcept {
    std::uint32_t candidate = 1;
    for (const auto& [n, ch] : channels_) {  // ascending
        if (n != candidate) break;
        ++candidate;
    }
    return candidate <= limits_.channel_max ? static_cast<std::uint16_t>(candidate) : 0;
}

std::size_t connection_machine::unconfirmed(channel_ref ref) const noexcept {
    const auto it = channels_.find(ref.number);
    if (it == channels_.end() || it->second->ref.serial != ref.serial) return 0;
    return it->second->confirms.unconfirmed();
}

namespace {

enum class frame_status { ok, bad_field, too_large };

/// Appends one method frame of at most `frame_max` bytes. On failure
/// appends nothing; for bad_field, `detail` (if any) gets the encoder's
/// message.
frame_status append_method_frame(std::vector<std::uint8_t>& out, std::uint16_t channel,
                                 const wire::method& m, std::uint32_t frame_max,
                                 std::string* detail) {
    const std::size_t start = out.size();
    const std::size_t at = wire::begin_frame(out, wire::frame_type::method, channel);
    wire::byte_writer w(out);
    wire::encode_method(w, m);
    if (!w.ok()) {
        out.resize(start);
        if (detail) *detail = w.detail();
        return frame_status::bad_field;
    }
    if (wire::end_frame(out, at, frame_max)) {
        out.resize(start);
        return frame_status::too_large;
    }
    return frame_status::ok;
}

}  // namespace

std::uint32_t connection_machine::frame_max() const noexcept {
    return limits_.frame_max ? limits_.frame_max : wire::min_frame_max;
}

bool connection_machine::encode_method_frame(std::vector<std::uint8_t>& out,
                                             std::uint16_t channel, const wire::method& m,
                                             std::string* detail) {
    const std::uint32_t max = frame_max();
    const frame_status status = append_method_frame(out, channel, m, max, detail);
    if (status == frame_status::too_large && detail) {
        *detail = std::string(wire::method_name(m)) + " does not fit in frame_max " +
                  std::to_string(max);
    }
    return status == frame_status::ok;
}

void connection_machine::write_method(std::uint16_t channel, const wire::method& m) {
    // Our own protocol methods always encode; nothing to report if not.
    (void)encode_method_frame(out_, channel, m, nullptr);
}

std::error_code connection_machine::encode_publish(std::vector<std::uint8_t>& out,
                                                   std::uint16_t channel,
                                                   const wire::basic_publish& m,
                                                   const wire::basic_properties& properties,
                                                   std::span<const std::uint8_t> body,
                                                   std::uint32_t frame_max, std::string* detail) {
    const std::size_t start = out.size();
    switch (append_method_frame(out, channel, m, frame_max, detail)) {
    case frame_status::ok: break;
    case frame_status::bad_field: return errc::invalid_argument;
    case frame_status::too_large:
        if (detail) *detail = "basic.publish does not fit in frame_max";
        return errc::invalid_argument;
    }
    if (auto ec = wire::encode_content(out, channel, properties, body, frame_max, detail)) {
        out.resize(start);
        // A header frame over frame_max would make the broker close the
        // connection; it is never sent, and said apart from other refusals.
        return ec == wire::errc::frame_too_large ? errc::header_too_large : errc::invalid_argument;
    }
    return {};
}

// ---- the per-channel queue ---------------------------------------------------

void connection_machine::enqueue(channel_state& ch, outgoing item) {
    ch.held.push_back(std::move(item));
    flush(ch);
}

void connection_machine::flush(channel_state& ch) {
    while (!ch.in_flight && !ch.held.empty() && state_ == state::open) {
        outgoing item = std::move(ch.held.front());
        ch.held.pop_front();
        out_.insert(out_.end(), item.frames.begin(), item.frames.end());
        switch (item.what) {
        case outgoing::kind::request:
            if (item.is_close) ch.state = channel_state::phase::closing;
            item.frames.clear();
            item.frames.shrink_to_fit();
            ch.in_flight = std::move(item);
            break;
        case outgoing::kind::publish:
            if (ch.confirm_mode) {
                ch.confirms.add(item.op);
            } else {
                complete(item.op, {});
            }
            break;
        case outgoing::kind::async: complete(item.op, {}); break;
        }
    }
}

// ---- requests ---------------------------------------------------------------

namespace {
std::string closed_channel_detail(channel_ref ch) {
    return "channel " + std::to_string(ch.number) + " is closed";
}
}  // namespace

bool connection_machine::require_open(op_id op) {
    if (state_ == state::open) return true;
    complete(op, errc::not_connected, "the connection is not open");
    return false;
}

void connection_machine::open_channel(op_id op) {
    if (!require_open(op)) return;
    const std::uint16_t n = free_channel_number();
    if (n == 0) {
        complete(op, errc::channel_limit_reached,
                 "all " + std::to_string(limits_.channel_max) + " channel numbers are in use");
        return;
    }
    auto ch = std::make_unique<channel_state>(n, next_serial_++, config_.max_body_size);
    channel_state& ref = *ch;
    channels_.emplace(n, std::move(ch));

    outgoing item;
    item.what = outgoing::kind::request;
    item.op = op;
    item.reply = *expected_reply(wire::channel_open{});
    encode_method_frame(item.frames, n, wire::channel_open{}, nullptr);
    enqueue(ref, std::move(item));
}

void connection_machine::close_channel(channel_ref ref, op_id op) {
    channel_state* ch = state_ == state::open ? find(ref) : nullptr;
    if (!ch || ch->state == channel_state::phase::closing) {
        complete(op, {});  // already closed: nothing to do
        return;
    }
    outgoing item;
    item.what = outgoing::kind::request;
    item.op = op;
    item.is_close = true;
    item.reply = *expected_reply(wire::channel_close{});
    wire::channel_close c;
    c.reply_text = "closed by the client";
    encode_method_frame(item.frames, ref.number, c, nullptr);
    enqueue(*ch, std::move(item));
}

channel_state* connection_machine::usable_channel(channel_ref ref, op_id op) {
    if (!require_open(op)) return nullptr;
    channel_state* ch = find(ref);
    if (!ch || ch->state == channel_state::phase::closing) {
        complete(op, errc::channel_closed, closed_channel_detail(ref));
        return nullptr;
    }
    return ch;
}

channel_state* connection_machine::prepare(channel_ref ref, const wire::method& m, op_id op,
                                           outgoing& item) {
    channel_state* ch = usable_channel(ref, op);
    if (!ch) return nullptr;
    std::string detail;
    if (!encode_method_frame(item.frames, ref.number, m, &detail)) {
        complete(op, errc::invalid_argument, std::move(detail));
        return nullptr;
    }
    item.op = op;
    return ch;
}

void connection_machine::request(channel_ref ref, wire::method m, op_id op) {
    outgoing item;
    channel_state* ch = prepare(ref, m, op, item);
    if (!ch) return;
    if (auto reply = expected_reply(m)) {
        item.what = outgoing::kind::request;
        item.reply = *reply;
    } else {
        item.what = outgoing::kind::async;
    }
    enqueue(*ch, std::move(item));
}

void connection_machine::consume(channel_ref ref, wire::basic_consume m, op_id op,
                                 op_id consumer) {
    m.no_wait = false;  // we need the tag from consume-ok
    const wire::method method{std::move(m)};
    outgoing item;
    channel_state* ch = prepare(ref, method, op, item);
    if (!ch) return;
    item.what = outgoing::kind::request;
    item.consumer = consumer;
    item.reply = *expected_reply(method);
    enqueue(*ch, std::move(item));
}

void connection_machine::send(channel_ref ref, wire::method m, op_id op) {
    outgoing item;
    channel_state* ch = prepare(ref, m, op, item);
    if (!ch) return;
    item.what = outgoing::kind::async;
    enqueue(*ch, std::move(item));
}

void connection_machine::publish(channel_ref ref, const wire::basic_publish& m,
                                 const wire::basic_properties& properties,
                                 std::span<const std::uint8_t> body, op_id op) {
    std::vector<std::uint8_t> frames;
    std::string detail;
    if (auto ec = encode_publish(frames, ref.number, m, properties, body, frame_max(), &detail)) {
        complete(op, ec, std::move(detail));
        return;
    }
    publish_encoded(ref, std::move(frames), op);
}

void connection_machine::publish_encoded(channel_ref ref, std::vector<std::uint8_t> frames,
                                         op_id op) {
    channel_state* ch = usable_channel(ref, op);
    if (!ch) return;
    outgoing item;
    item.what = outgoing::kind::publish;
    item.frames = std::move(frames);
    item.op = op;
    enqueue(*ch, std::move(item));
}

}  // namespace tarry::amqp::detail
