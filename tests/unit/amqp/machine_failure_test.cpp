// Failure injection: a full conversation (handshake, channels, confirms,
// consumer, content, get, heartbeats, channel error, both closes) is cut at
// every step, and in the middle of every server frame, by a read error, a
// write error or a timer far in the future. Whatever the cut, the machine
// finishes, every operation issued completes exactly once, every consumer
// ends, no deadline is left armed, and later requests fail at once.
#include "machine_harness.hpp"

#include <functional>
#include <map>

using namespace amqp_test;
namespace amqp = tarry::amqp;

namespace {

struct step {
    std::string name;
    // Either server bytes (cut-able in the middle) or a client action.
    std::vector<std::uint8_t> server;
    std::function<void(harness&)> action;
};

std::vector<step> conversation() {
    using H = harness;
    std::vector<step> s;
    const auto srv = [&](std::string name, std::vector<std::uint8_t> b) {
        s.push_back({std::move(name), std::move(b), {}});
    };
    const auto act = [&](std::string name, std::function<void(harness&)> f) {
        s.push_back({std::move(name), {}, std::move(f)});
    };
    const channel_ref ch1{1, 1}, ch2{2, 2};
    wire::connection_start start;
    start.mechanisms = "PLAIN";
    std::vector<std::uint8_t> body(9000, 0x5a);

    act("start", [](harness& h) { h.m.start(h.now, h.now + 30s); });
    srv("connection.start", H::method_frame(0, start));
    srv("connection.tune", H::method_frame(0, wire::connection_tune{2047, 4096, 10}));
    srv("connection.open-ok", H::method_frame(0, wire::connection_open_ok{}));
    act("open channel 1", [](harness& h) { h.m.open_channel(1); });
    srv("channel.open-ok 1", H::method_frame(1, wire::channel_open_ok{}));
    act("open channel 2", [](harness& h) { h.m.open_channel(2); });
    srv("channel.open-ok 2", H::method_frame(2, wire::channel_open_ok{}));
    act("confirm.select + 3 publishes", [=](harness& h) {
        h.m.request(ch2, wire::confirm_select{}, 3);
        for (op_id op = 4; op <= 6; ++op) {
            h.m.publish(ch2, wire::basic_publish{0, "", "q"}, {}, body, op);
        }
    });
    srv("confirm.select-ok", H::method_frame(2, wire::confirm_select_ok{}));
    act("consume + declare", [=](harness& h) {
        h.m.consume(ch1, wire::basic_consume{0, "q", "c1"}, 7, 100);
        h.m.request(ch1, wire::queue_declare{0, "q2"}, 8);
    });
    srv("consume-ok", H::method_frame(1, wire::basic_consume_ok{"c1"}));
    srv("declare-ok", H::method_frame(1, wire::queue_declare_ok{"q2", 0, 0}));
    srv("deliver method", H::method_frame(1, wire::basic_deliver{"c1", 1, false, "", "q"}));
    srv("deliver content", H::content_frames(1, {}, body));
    srv("ack multiple 2", H::method_frame(2, wire::basic_ack{2, true}));
    act("get", [=](harness& h) { h.m.request(ch1, wire::basic_get{0, "q"}, 9); });
    srv("get-ok + content", cat(H::method_frame(1, wire::basic_get_ok{1, false, "", "q", 0}),
                                H::content_frames(1, {}, body)));
    act("5 s pass (heartbeat)", [](harness& h) { h.advance(5s); });
    srv("heartbeat", [] {
        std::vector<std::uint8_t> b;
        wire::encode_heartbeat(b);
        return b;
    }());
    {
        wire::channel_close c;
        c.reply_code = 406;
        c.reply_text = "PRECONDITION_FAILED - unknown delivery tag 42";
        srv("channel.close 406 on 2", H::method_frame(2, c));
    }
    act("close channel 1", [=](harness& h) { h.m.close_channel(ch1, 10); });
    srv("channel.close-ok 1", H::method_frame(1, wire::channel_close_ok{}));
    act("close connection", [](harness& h) { h.m.close(11, h.now); });
    srv("connection.close-ok", H::method_frame(0, wire::connection_close_ok{}));
    return s;
}

enum class failure { read_error, write_error, timer };

const char* name_of(failure f) {
    switch (f) {
    case failure::read_error: return "read error";
    case failure::write_error: return "write error";
    case failure::timer: return "timer an hour later";
    }
    return "?";
}

void run_step(harness& h, const step& s) {
    if (s.action) {
        s.action(h);
        h.pump();
    } else {
        h.server_bytes(s.server);
    }
}

void inject(harness& h, failure f) {
    switch (f) {
    case failure::read_error:
        h.m.on_transport_error(amqp::errc::connection_lost, "end of stream", h.now);
        break;
    case failure::write_error:
        h.m.on_transport_error(std::make_error_code(std::errc::broken_pipe), "write: broken pipe",
                               h.now);
        break;
    case failure::timer:
        h.now += 1h;
        h.m.on_timer(h.now);
        if (!h.m.finished()) {
            // No deadline armed here (e.g. before start): the transport fails instead.
            h.m.on_transport_error(amqp::errc::connection_lost, "end of stream", h.now);
        }
        break;
    }
    h.pump();
}

void check_everything_finished(harness& h, op_id issued_up_to, bool consumer_registered) {
    REQUIRE(h.m.finished());
    CHECK_FALSE(h.m.next_deadline());
    std::map<op_id, int> done;
    int closed = 0, consumer_ended = 0;
    for (const auto& e : h.events) {
        if (auto* d = std::get_if<ev_op_done>(&e)) ++done[d->id];
        if (std::holds_alternative<ev_connection_closed>(e)) ++closed;
        if (auto* c = std::get_if<ev_consumer_ended>(&e); c && c->consumer == 100) ++consumer_ended;
    }
    CHECK(closed == 1);
    for (op_id op = 1; op <= issued_up_to; ++op) {
        CAPTURE(op);
        CHECK(done[op] == 1);
    }
    CHECK(consumer_ended == (consumer_registered ? 1 : 0));
    // Later requests never wait.
    h.m.open_channel(999);
    h.m.request({1, 1}, wire::basic_qos{}, 998);
    h.m.close(997, h.now);
    h.pump();
    for (op_id op : {999, 998, 997}) {
        CAPTURE(op);
        CHECK(h.take_op(op).has_value());
    }
}

// The highest op id issued once the first `n` steps ran.
op_id ops_issued(const std::vector<step>& steps, std::size_t n) {
    static const std::map<std::string, op_id> issued = {
        {"open channel 1", 1}, {"open channel 2", 2}, {"confirm.select + 3 publishes", 6},
        {"consume + declare", 8}, {"get", 9}, {"close channel 1", 10}, {"close connection", 11}};
    op_id top = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (auto it = issued.find(steps[i].name); it != issued.end()) top = it->second;
    }
    return top;
}

bool consumer_registered(const std::vector<step>& steps, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (steps[i].name == "consume-ok") return true;
    }
    return false;
}

}  // namespace

TEST_CASE("the whole conversation runs to a clean close when nothing fails") {
    harness h;
    const auto steps = conversation();
    for (const auto& s : steps) {
        CAPTURE(s.name);
        run_step(h, s);
        const bool closed = h.take<ev_connection_closed>().has_value();
        CHECK(closed == (&s == &steps.back()));
    }
    CHECK(h.m.finished());
    std::map<op_id, std::error_code> result;
    for (const auto& e : h.events) {
        if (auto* d = std::get_if<ev_op_done>(&e)) result[d->id] = d->ec;
    }
    for (op_id op = 1; op <= 11; ++op) {
        CAPTURE(op);
        REQUIRE(result.count(op) == 1);
    }
    CHECK_FALSE(result[4]);
    CHECK_FALSE(result[5]);
    CHECK(result[6] == amqp::reply_code::precondition_failed);  // unconfirmed when ch 2 closed
    CHECK_FALSE(result[9]);
    CHECK(h.heartbeats_sent() >= 1);
}

TEST_CASE("a failure at every step: nothing hangs, everything completes once") {
    const auto steps = conversation();
    for (std::size_t cut = 1; cut <= steps.size(); ++cut) {
        for (failure f : {failure::read_error, failure::write_error, failure::timer}) {
            CAPTURE(cut);
            CAPTURE(steps[cut - 1].name);
            CAPTURE(name_of(f));
            harness h;
            for (std::size_t i = 0; i < cut; ++i) run_step(h, steps[i]);
            inject(h, f);
            check_everything_finished(h, ops_issued(steps, cut), consumer_registered(steps, cut));
        }
    }
}

TEST_CASE("a failure in the middle of every server frame") {
    const auto steps = conversation();
    for (std::size_t k = 0; k < steps.size(); ++k) {
        if (steps[k].server.size() < 2) continue;
        for (std::size_t part : {std::size_t{1}, steps[k].server.size() / 2,
                                 steps[k].server.size() - 1}) {
            CAPTURE(steps[k].name);
            CAPTURE(part);
            harness h;
            for (std::size_t i = 0; i < k; ++i) run_step(h, steps[i]);
            std::vector<std::uint8_t> head(steps[k].server.begin(),
                                           steps[k].server.begin() + static_cast<std::ptrdiff_t>(part));
            h.server_bytes(head);
            if (h.m.finished()) continue;  // the cut itself completed the close
            inject(h, failure::read_error);
            check_everything_finished(h, ops_issued(steps, k), consumer_registered(steps, k));
        }
    }
}

TEST_CASE("the conversation byte by byte gives the same result as whole frames") {
    const auto steps = conversation();
    harness whole, bytewise;
    bytewise.chunk = 1;
    for (const auto& s : steps) {
        run_step(whole, s);
        run_step(bytewise, s);
    }
    CHECK(whole.sent.size() == bytewise.sent.size());
    CHECK(whole.events.size() == bytewise.events.size());
    CHECK(bytewise.m.finished());
}
