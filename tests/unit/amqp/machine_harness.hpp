// A scripted broker for unit tests of the connection machine: it encodes
// server frames with the codec, feeds them in (whole or in chunks), decodes
// what the machine writes back, keeps a fake clock and records every event,
// so a test reads like the conversation it checks.
#pragma once

#include "detail/connection_machine.hpp"

#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"
#include "tarry/amqp/wire/methods.hpp"

#include <doctest/doctest.h>

#include <ostream>  // doctest prints std::error_code with it

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace amqp_test {

namespace wire = tarry::amqp::wire;
using namespace tarry::amqp::detail;
using namespace std::chrono_literals;

/// One frame the client sent, decoded.
struct sent_frame {
    wire::frame_type type;
    std::uint16_t channel;
    std::optional<wire::method> method;        // for method frames
    std::vector<std::uint8_t> payload;
};

class harness {
public:
    explicit harness(machine_config cfg = {}) : m(std::move(cfg)), client_frames_(0) {}

    connection_machine m;
    time_point now = time_point{} + 1000h;
    std::deque<event> events;
    std::vector<sent_frame> sent;
    bool saw_protocol_header = false;
    /// Feed server bytes in chunks of this size (0 = whole).
    std::size_t chunk = 0;

    // ---- time and pumping ---------------------------------------------------

    /// Collects output and events after any call on the machine.
    void pump() {
        std::vector<std::uint8_t> out;
        m.take_output(out, now);
        if (!out.empty()) absorb_client_bytes(out);
        m.take_events(events);
    }
    void advance(std::chrono::milliseconds d) {
        now += d;
        if (auto dl = m.next_deadline(); dl && *dl <= now) m.on_timer(now);
        pump();
    }
    /// Advances to the next deadline exactly and fires it.
    void fire_deadline() {
        auto dl = m.next_deadline();
        REQUIRE(dl.has_value());
        if (*dl > now) now = *dl;
        m.on_timer(now);
        pump();
    }

    // ---- server side ---------------------------------------------------------

    void server_bytes(const std::vector<std::uint8_t>& b) {
        if (chunk == 0) {
            m.on_bytes(b, now);
        } else {
            for (std::size_t i = 0; i < b.size(); i += chunk) {
                const std::size_t n = std::min(chunk, b.size() - i);
                auto span = m.prepare_read(n);
                std::copy_n(b.begin() + static_cast<std::ptrdiff_t>(i), n, span.begin());
                m.commit_read(n, now);
            }
        }
        pump();
    }
    static std::vector<std::uint8_t> method_frame(std::uint16_t ch, const wire::method& meth) {
        std::vector<std::uint8_t> out;
        const auto at = wire::begin_frame(out, wire::frame_type::method, ch);
        wire::byte_writer w(out);
        wire::encode_method(w, meth);
        REQUIRE(w.ok());
        REQUIRE_FALSE(wire::end_frame(out, at, 0));
        return out;
    }
    static std::vector<std::uint8_t> content_frames(std::uint16_t ch,
                                                    const wire::basic_properties& p,
                                                    const std::vector<std::uint8_t>& body,
                                                    std::uint32_t frame_max = 4096) {
        std::vector<std::uint8_t> out;
        REQUIRE_FALSE(wire::encode_content(out, ch, p, body, frame_max));
        return out;
    }
    void server(std::uint16_t ch, const wire::method& meth) { server_bytes(method_frame(ch, meth)); }
    void server_with_content(std::uint16_t ch, const wire::method& meth,
                             const wire::basic_properties& p, const std::vector<std::uint8_t>& body) {
        auto b = method_frame(ch, meth);
        auto c = content_frames(ch, p, body);
        b.insert(b.end(), c.begin(), c.end());
        server_bytes(b);
    }
    void server_heartbeat() {
        std::vector<std::uint8_t> b;
        wire::encode_heartbeat(b);
        server_bytes(b);
    }

    /// Runs the whole handshake; the connection is open afterwards.
    void handshake(std::uint16_t heartbeat = 60, std::uint32_t frame_max = 131072,
                   std::uint16_t channel_max = 2047) {
        m.start(now, now + 30s);
        pump();
        REQUIRE(saw_protocol_header);
        wire::connection_start start;
        start.mechanisms = "AMQPLAIN PLAIN";
        server(0, start);
        REQUIRE(last_sent_is<wire::connection_start_ok>());
        server(0, wire::connection_tune{channel_max, frame_max, heartbeat});
        REQUIRE(sent.size() >= 2);
        server(0, wire::connection_open_ok{});
        REQUIRE(m.is_open());
        REQUIRE(take<ev_connection_open>().has_value());
    }

    /// Opens a channel with `op`, answers open-ok; returns its ref.
    channel_ref open_channel(op_id op) {
        m.open_channel(op);
        pump();
        const auto& f = sent.back();
        REQUIRE(f.method);
        REQUIRE(std::holds_alternative<wire::channel_open>(*f.method));
        server(f.channel, wire::channel_open_ok{});
        auto done = take_op(op);
        REQUIRE(done.has_value());
        REQUIRE_FALSE(done->ec);
        return done->channel;
    }

    // ---- what the client did -----------------------------------------------------

    template <class M>
    bool last_sent_is() const {
        return !sent.empty() && sent.back().method && std::holds_alternative<M>(*sent.back().method);
    }
    template <class M>
    const M* last_sent() const {
        if (sent.empty() || !sent.back().method) return nullptr;
        return std::get_if<M>(&*sent.back().method);
    }
    /// Every sent method of type M, in order.
    template <class M>
    std::vector<M> sent_methods() const {
        std::vector<M> out;
        for (const auto& f : sent) {
            if (f.method) {
                if (auto* x = std::get_if<M>(&*f.method)) out.push_back(*x);
            }
        }
        return out;
    }
    std::size_t heartbeats_sent() const {
        std::size_t n = 0;
        for (const auto& f : sent) n += f.type == wire::frame_type::heartbeat;
        return n;
    }

    // ---- events ----------------------------------------------------------------

    /// Removes and returns the first event of type E.
    template <class E>
    std::optional<E> take() {
        for (auto it = events.begin(); it != events.end(); ++it) {
            if (auto* e = std::get_if<E>(&*it)) {
                E out = std::move(*e);
                events.erase(it);
                return out;
            }
        }
        return std::nullopt;
    }
    std::optional<ev_op_done> take_op(op_id id) {
        for (auto it = events.begin(); it != events.end(); ++it) {
            if (auto* e = std::get_if<ev_op_done>(&*it); e && e->id == id) {
                ev_op_done out = std::move(*e);
                events.erase(it);
                return out;
            }
        }
        return std::nullopt;
    }
    template <class E>
    std::size_t count() const {
        std::size_t n = 0;
        for (const auto& e : events) n += std::holds_alternative<E>(e);
        return n;
    }

private:
    void absorb_client_bytes(const std::vector<std::uint8_t>& out) {
        std::span<const std::uint8_t> b(out);
        if (!saw_protocol_header) {
            REQUIRE(b.size() >= 8);
            REQUIRE_FALSE(wire::check_protocol_header(b.first(8)));
            saw_protocol_header = true;
            b = b.subspan(8);
        }
        client_frames_.feed(b);
        while (auto f = client_frames_.next()) {
            sent_frame s{f->type, f->channel, std::nullopt, {f->payload.begin(), f->payload.end()}};
            if (f->type == wire::frame_type::method) {
                wire::method meth;
                std::string detail;
                REQUIRE_MESSAGE(!wire::decode_method(f->payload, meth, &detail), detail);
                s.method = std::move(meth);
            }
            sent.push_back(std::move(s));
        }
        REQUIRE_MESSAGE(!client_frames_.error(), client_frames_.detail());
    }

    wire::frame_parser client_frames_;
};

/// `a` then `b`: server bytes sent in one read.
inline std::vector<std::uint8_t> cat(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace amqp_test
