// The connection machine: handshake, heartbeats, connection close and
// failure, frame routing. Channel frames: channel_dispatch.cpp; requests:
// machine_requests.cpp.
#include "connection_machine.hpp"

#include "handshake.hpp"

#include "tarry/amqp/wire/frame.hpp"

#include <algorithm>

namespace tarry::amqp::detail {

const char* to_string(connection_machine::state s) noexcept {
    using st = connection_machine::state;
    switch (s) {
    case st::idle: return "idle";
    case st::awaiting_start: return "waiting for connection.start";
    case st::awaiting_tune: return "waiting for connection.tune (credentials being checked)";
    case st::awaiting_open_ok: return "waiting for connection.open-ok";
    case st::open: return "open";
    case st::closing: return "closing";
    case st::closed: return "closed";
    }
    return "?";
}

connection_machine::connection_machine(machine_config config)
    : config_(std::move(config)), parser_(wire::min_frame_max) {
    if (config_.max_body_size == 0) {
        config_.max_body_size = wire::content_assembler::default_max_body_size;
    }
}

void connection_machine::start(time_point now, std::optional<time_point> handshake_deadline) {
    if (state_ != state::idle) return;
    out_.insert(out_.end(), wire::protocol_header.begin(), wire::protocol_header.end());
    last_sent_ = last_received_ = now;
    handshake_deadline_ = handshake_deadline;
    state_ = state::awaiting_start;
}

void connection_machine::on_bytes(std::span<const std::uint8_t> bytes, time_point now) {
    if (state_ == state::idle || state_ == state::closed || bytes.empty()) return;
    parser_.feed(bytes);
    last_received_ = now;
    process_frames(now);
}

std::span<std::uint8_t> connection_machine::prepare_read(std::size_t n) {
    return parser_.prepare(n);
}

void connection_machine::commit_read(std::size_t n, time_point now) {
    parser_.commit(n);
    if (state_ == state::idle || state_ == state::closed || n == 0) return;
    last_received_ = now;
    process_frames(now);
}

void connection_machine::take_output(std::vector<std::uint8_t>& into, time_point now) {
    if (out_.empty()) return;
    into.swap(out_);
    out_.clear();
    last_sent_ = now;
}

void connection_machine::take_events(std::deque<event>& into) {
    if (into.empty()) {
        into.swap(events_);
    } else {
        for (auto& e : events_) into.push_back(std::move(e));
        events_.clear();
    }
}

std::optional<time_point> connection_machine::next_deadline() const noexcept {
    switch (state_) {
    case state::awaiting_start:
    case state::awaiting_tune:
    case state::awaiting_open_ok: return handshake_deadline_;
    case state::closing: return close_deadline_;
    case state::open: {
        if (limits_.heartbeat == 0) return std::nullopt;
        const auto h = std::chrono::seconds(limits_.heartbeat);
        time_point t = last_received_ + 2 * h;
        // With output pending, something is about to be sent anyway.
        if (out_.empty()) t = std::min(t, last_sent_ + h / 2);
        return t;
    }
    default: return std::nullopt;
    }
}

void connection_machine::on_timer(time_point now) {
    switch (state_) {
    case state::awaiting_start:
    case state::awaiting_tune:
    case state::awaiting_open_ok:
        if (handshake_deadline_ && now >= *handshake_deadline_) {
            finish(errc::connect_timeout,
                   std::string("the AMQP handshake did not finish within the connection timeout (") +
                       to_string(state_) + ")",
                   std::nullopt);
        }
        return;
    case state::closing:
        if (close_deadline_ && now >= *close_deadline_) {
            finish(errc::connection_closed,
                   "closed by the client; the broker did not answer connection.close in time",
                   std::nullopt);
        }
        return;
    case state::open: {
        if (limits_.heartbeat == 0) return;
        const auto h = std::chrono::seconds(limits_.heartbeat);
        if (now - last_received_ >= 2 * h) {
            const auto silent =
                std::chrono::duration_cast<milliseconds>(now - last_received_).count();
            finish(errc::heartbeat_timeout,
                   "nothing received from the broker for " + std::to_string(silent) +
                       " ms (two heartbeat intervals of " + std::to_string(limits_.heartbeat) +
                       " s): the connection is dead",
                   std::nullopt);
            return;
        }
        if (out_.empty() && now - last_sent_ >= h / 2) wire::encode_heartbeat(out_);
        return;
    }
    default: return;
    }
}

void connection_machine::on_transport_error(std::error_code ec, std::string detail,
                                            time_point) {
    switch (state_) {
    case state::idle:
    case state::closed: return;
    case state::closing:
        finish(errc::connection_closed, "closed by the client (" + detail + ")", std::nullopt);
        return;
    case state::awaiting_tune:
        // RabbitMQ drops the socket on bad credentials when the client does
        // not advertise authentication_failure_close; we do, but a broker
        // that ignores it still means the same thing.
        finish(errc::authentication_failed,
               "the broker closed the connection while checking the credentials (wrong user "
               "name or password?): " + detail,
               std::nullopt);
        return;
    default:
        finish(ec ? ec : make_error_code(errc::connection_lost), std::move(detail), std::nullopt);
        return;
    }
}

void connection_machine::abort(std::error_code ec, std::string detail) {
    finish(ec, std::move(detail), std::nullopt);
}

// ---- frames ---------------------------------------------------------------

void connection_machine::process_frames(time_point now) {
    while (state_ != state::closed) {
        auto f = parser_.next();
        if (!f) {
            if (const auto ec = parser_.error()) {
                if (ec == wire::errc::bad_protocol_header) {
                    finish(errc::protocol_version_refused,
                           "the broker does not speak AMQP 0-9-1: " + parser_.detail(),
                           std::nullopt);
                } else {
                    protocol_failure(static_cast<std::uint16_t>(reply_code::frame_error),
                                     "malformed frame from the broker: " + parser_.detail());
                }
            }
            return;
        }
        on_frame(*f, now);
    }
}

void connection_machine::on_frame(const wire::frame_view& f, time_point now) {
    if (f.type == wire::frame_type::heartbeat) return;
    if (f.channel == 0) {
        if (f.type != wire::frame_type::method) {
            protocol_failure(static_cast<std::uint16_t>(reply_code::unexpected_frame),
                             std::string("a ") + wire::to_string(f.type) +
                                 " frame on channel 0");
            return;
        }
        wire::method m;
        std::string detail;
        if (auto ec = wire::decode_method(f.payload, m, &detail)) {
            protocol_failure(static_cast<std::uint16_t>(reply_code::syntax_error),
                             "undecodable method on channel 0: " + detail);
            return;
        }
        on_connection_method(m, now);
        return;
    }
    if (state_ == state::closing) return;  // everything but close / close-ok is discarded
    if (state_ != state::open) {
        protocol_failure(static_cast<std::uint16_t>(reply_code::unexpected_frame),
                         "a frame on channel " + std::to_string(f.channel) +
                             " before the connection is open");
        return;
    }
    on_channel_frame(f);
}

void connection_machine::on_connection_method(wire::method& m, time_point now) {
    if (auto* c = std::get_if<wire::connection_close>(&m)) {
        write_method(0, wire::connection_close_ok{});
        broker_reply reply{c->reply_code, c->reply_text, c->failing_class_id,
                           c->failing_method_id};
        std::error_code ec = broker_error(c->reply_code);
        std::string detail = "the broker closed the connection: " + reply.to_string();
        if (state_ == state::awaiting_tune && c->reply_code == 403) {
            ec = errc::authentication_failed;
        } else if (state_ == state::awaiting_open_ok && (c->reply_code == 530 || c->reply_code == 403)) {
            ec = errc::vhost_access_refused;
        } else if (state_ == state::closing) {
            ec = errc::connection_closed;  // crossing closes: ours stands
        }
        finish(ec, std::move(detail), std::move(reply));
        return;
    }
    if (std::holds_alternative<wire::connection_close_ok>(m)) {
        if (state_ == state::closing) {
            finish(errc::connection_closed, "closed by the client", std::nullopt);
        } else {
            protocol_failure(static_cast<std::uint16_t>(reply_code::command_invalid),
                             "connection.close-ok without a connection.close");
        }
        return;
    }
    if (state_ == state::closing) return;

    const auto unexpected = [&] {
        protocol_failure(static_cast<std::uint16_t>(reply_code::command_invalid),
                         std::string("unexpected ") + std::string(wire::method_name(m)) + " (" +
                             to_string(state_) + ")");
    };

    switch (state_) {
    case state::awaiting_start: {
        auto* s = std::get_if<wire::connection_start>(&m);
        if (!s) return unexpected();
        if (s->version_major != 0 || s->version_minor != 9) {
            finish(errc::protocol_version_refused,
                   "the broker offers AMQP " + std::to_string(s->version_major) + "-" +
                       std::to_string(s->version_minor) + ", tarry speaks 0-9-1",
                   std::nullopt);
            return;
        }
        if (!offers_mechanism(s->mechanisms, "PLAIN")) {
            finish(errc::unsupported_mechanism,
                   "the broker offers SASL mechanisms '" + s->mechanisms +
                       "', tarry speaks PLAIN only",
                   std::nullopt);
            return;
        }
        server_properties_ = std::move(s->server_properties);
        wire::connection_start_ok ok;
        ok.client_properties = client_properties(config_.connection_name);
        ok.mechanism = "PLAIN";
        ok.response = plain_response(config_.username, config_.password);
        ok.locale = "en_US";
        write_method(0, ok);
        state_ = state::awaiting_tune;
        return;
    }
    case state::awaiting_tune: {
        if (std::holds_alternative<wire::connection_secure>(m)) {
            finish(errc::unsupported_mechanism,
                   "the broker sent a SASL challenge (connection.secure); PLAIN needs none",
                   std::nullopt);
            return;
        }
        auto* t = std::get_if<wire::connection_tune>(&m);
        if (!t) return unexpected();
        limits_ = negotiate(*t, config_.channel_max, config_.frame_max, config_.heartbeat);
        write_method(0, wire::connection_tune_ok{limits_.channel_max, limits_.frame_max,
                                                 limits_.heartbeat});
        parser_.set_frame_max(limits_.frame_max);
        wire::connection_open open;
        open.virtual_host = config_.vhost;
        write_method(0, open);
        state_ = state::awaiting_open_ok;
        return;
    }
    case state::awaiting_open_ok: {
        if (!std::holds_alternative<wire::connection_open_ok>(m)) return unexpected();
        state_ = state::open;
        handshake_deadline_.reset();
        last_received_ = now;
        events_.push_back(ev_connection_open{limits_, server_properties_});
        return;
    }
    case state::open: {
        if (auto* b = std::get_if<wire::connection_blocked>(&m)) {
            blocked_ = true;
            events_.push_back(ev_blocked{true, b->reason});
            return;
        }
        if (std::holds_alternative<wire::connection_unblocked>(m)) {
            blocked_ = false;
            events_.push_back(ev_blocked{false, {}});
            return;
        }
        if (std::holds_alternative<wire::connection_update_secret_ok>(m)) return;
        return unexpected();
    }
    default: return;
    }
}

// ---- ending ----------------------------------------------------------------

void connection_machine::finish(std::error_code ec, std::string detail,
                                std::optional<broker_reply> reply) {
    if (state_ == state::closed) return;
    state_ = state::closed;
    handshake_deadline_.reset();
    close_deadline_.reset();
    std::vector<std::uint16_t> numbers;
    numbers.reserve(channels_.size());
    for (const auto& [n, ch] : channels_) numbers.push_back(n);
    for (const auto n : numbers) drop_channel(n, ec, detail, reply);
    for (const auto op : close_ops_) complete(op, {});
    close_ops_.clear();
    events_.push_back(ev_connection_closed{ec, std::move(detail), std::move(reply)});
}

void connection_machine::protocol_failure(std::uint16_t code, std::string detail) {
    if (state_ == state::closed) return;
    if (state_ != state::idle) {
        wire::connection_close c;
        c.reply_code = code;
        c.reply_text = detail.substr(0, 255);
        write_method(0, c);
    }
    finish(errc::protocol_error, std::move(detail), std::nullopt);
}

void connection_machine::close(op_id op, time_point now, std::uint16_t code, std::string text) {
    switch (state_) {
    case state::idle:
    case state::closed: complete(op, {}); return;
    case state::closing:
        if (op) close_ops_.push_back(op);
        return;
    case state::open: {
        if (op) close_ops_.push_back(op);
        wire::connection_close c;
        c.reply_code = code;
        c.reply_text = text.substr(0, 255);
        write_method(0, c);
        state_ = state::closing;
        if (config_.close_timeout.count() > 0) close_deadline_ = now + config_.close_timeout;
        std::vector<std::uint16_t> numbers;
        for (const auto& [n, ch] : channels_) numbers.push_back(n);
        for (const auto n : numbers) {
            drop_channel(n, errc::connection_closed, "the connection was closed by the client",
                         std::nullopt);
        }
        return;
    }
    default:  // handshake under way: abort it
        if (op) close_ops_.push_back(op);
        finish(errc::connection_closed, "closed by the client during the handshake",
               std::nullopt);
        return;
    }
}

}  // namespace tarry::amqp::detail
