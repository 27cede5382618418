// The connection machine, connection level: handshake, tuning, heartbeats,
// blocked/unblocked, close in both directions, handshake failures.
#include "machine_harness.hpp"

#include "detail/handshake.hpp"

#include <cstdlib>

using namespace amqp_test;
namespace amqp = tarry::amqp;

TEST_CASE("handshake: the client property version is meson.build's project version") {
    // meson's own project version, as the build passes it to the tests.
    const char* expected = std::getenv("TARRY_PROJECT_VERSION");
    REQUIRE_MESSAGE(expected != nullptr, "TARRY_PROJECT_VERSION is not set (run through meson test)");
    harness h(machine_config{});
    h.handshake(60, 131072, 2047);
    auto ok = h.sent_methods<wire::connection_start_ok>();
    REQUIRE(ok.size() == 1);
    const auto* version = ok[0].client_properties.find("version");
    REQUIRE(version);
    REQUIRE(version->get_if<std::string>());
    CHECK(*version->get_if<std::string>() == std::string(expected));
}

TEST_CASE("handshake: PLAIN credentials, capabilities, tune-ok, vhost") {
    machine_config cfg;
    cfg.username = "ann";
    cfg.password = "s3cret";
    cfg.vhost = "jobs";
    cfg.connection_name = "worker-7";
    harness h(cfg);
    h.handshake(60, 131072, 2047);

    auto ok = h.sent_methods<wire::connection_start_ok>();
    REQUIRE(ok.size() == 1);
    CHECK(ok[0].mechanism == "PLAIN");
    CHECK(ok[0].response == std::string("\0ann\0s3cret", 11));
    const auto* caps = ok[0].client_properties.find("capabilities");
    REQUIRE(caps);
    const auto* table = caps->get_if<wire::field_table>();
    REQUIRE(table);
    for (const char* cap : {"publisher_confirms", "consumer_cancel_notify", "basic.nack",
                            "connection.blocked", "authentication_failure_close",
                            "per_consumer_qos"}) {
        CAPTURE(cap);
        const auto* v = table->find(cap);
        REQUIRE(v);
        CHECK(*v->get_if<bool>());
    }
    const auto* name = ok[0].client_properties.find("connection_name");
    REQUIRE(name);
    CHECK(*name->get_if<std::string>() == "worker-7");

    auto tune = h.sent_methods<wire::connection_tune_ok>();
    REQUIRE(tune.size() == 1);
    CHECK(tune[0].channel_max == 2047);
    CHECK(tune[0].frame_max == 131072);
    CHECK(tune[0].heartbeat == 60);
    auto open = h.sent_methods<wire::connection_open>();
    REQUIRE(open.size() == 1);
    CHECK(open[0].virtual_host == "jobs");
    CHECK(h.m.limits() == negotiated_limits{2047, 131072, 60});
    CHECK(h.sent.front().channel == 0);
}

TEST_CASE("tune negotiation takes the smaller non-zero value") {
    using tarry::amqp::detail::negotiate;
    CHECK(negotiate({2047, 131072, 60}, 100, 8192, 10) == negotiated_limits{100, 8192, 10});
    CHECK(negotiate({2047, 131072, 60}, 0, 0, 60) == negotiated_limits{2047, 131072, 60});
    CHECK(negotiate({0, 0, 0}, 0, 0, 30) == negotiated_limits{65535, 131072, 30});
    CHECK(negotiate({10, 131072, 60}, 2047, 1000000, 0) == negotiated_limits{10, 131072, 0});
    CHECK(negotiate({10, 131072, 60}, 2047, 100, 5).frame_max == 4096);
}

TEST_CASE("the handshake is accepted when server bytes come one at a time") {
    harness h;
    h.chunk = 1;
    h.handshake();
    CHECK(h.m.is_open());
}

TEST_CASE("bad credentials: a 403 close during the handshake is authentication_failed") {
    harness h;
    h.m.start(h.now, h.now + 30s);
    h.pump();
    h.server(0, wire::connection_start{});
    wire::connection_close c;
    c.reply_code = 403;
    c.reply_text = "ACCESS_REFUSED - Login was refused using authentication mechanism PLAIN.";
    h.server(0, c);
    CHECK(h.last_sent_is<wire::connection_close_ok>());
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::authentication_failed);
    REQUIRE(closed->reply);
    CHECK(closed->reply->code == 403);
    CHECK(closed->detail.find("Login was refused") != std::string::npos);
    CHECK(h.m.finished());
}

TEST_CASE("bad credentials: a dropped socket after start-ok is authentication_failed") {
    harness h;
    h.m.start(h.now, std::nullopt);
    h.pump();
    h.server(0, wire::connection_start{});
    h.m.on_transport_error(amqp::errc::connection_lost, "end of stream", h.now);
    h.pump();
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::authentication_failed);
    CHECK(closed->detail.find("end of stream") != std::string::npos);
}

TEST_CASE("unknown vhost: the close after connection.open is vhost_access_refused") {
    harness h;
    h.m.start(h.now, std::nullopt);
    h.pump();
    h.server(0, wire::connection_start{});
    h.server(0, wire::connection_tune{2047, 131072, 60});
    wire::connection_close c;
    c.reply_code = 530;
    c.reply_text = "NOT_ALLOWED - vhost nope not found";
    c.failing_class_id = 10;
    c.failing_method_id = 40;
    h.server(0, c);
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::vhost_access_refused);
    CHECK(closed->detail.find("vhost nope not found") != std::string::npos);
    CHECK(closed->detail.find("connection.open") != std::string::npos);
}

TEST_CASE("a server that answers with its own protocol header") {
    harness h;
    h.m.start(h.now, std::nullopt);
    h.pump();
    h.server_bytes({'A', 'M', 'Q', 'P', 0, 0, 9, 0});
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::protocol_version_refused);
}

TEST_CASE("no PLAIN among the mechanisms") {
    harness h;
    h.m.start(h.now, std::nullopt);
    h.pump();
    wire::connection_start s;
    s.mechanisms = "EXTERNAL AMQPLAIN";
    h.server(0, s);
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::unsupported_mechanism);
    CHECK(closed->detail.find("EXTERNAL AMQPLAIN") != std::string::npos);
}

TEST_CASE("a silent server hits the handshake deadline") {
    harness h;
    h.m.start(h.now, h.now + 10s);
    h.pump();
    h.server(0, wire::connection_start{});
    h.advance(9s);
    CHECK_FALSE(h.m.finished());
    h.advance(1s);
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::connect_timeout);
    CHECK(closed->detail.find("credentials") != std::string::npos);
}

TEST_CASE("heartbeats: sent after half an interval of silence, traffic postpones them") {
    harness h;
    h.handshake(10);
    const auto base = h.heartbeats_sent();
    REQUIRE(h.m.next_deadline());
    CHECK(*h.m.next_deadline() == h.now + 5s);
    h.advance(4s);
    CHECK(h.heartbeats_sent() == base);
    h.m.open_channel(1);  // traffic from us
    h.pump();
    h.advance(4s);
    CHECK(h.heartbeats_sent() == base);
    h.advance(1s);
    CHECK(h.heartbeats_sent() == base + 1);
    h.server_heartbeat();
    h.advance(5s);
    CHECK(h.heartbeats_sent() == base + 2);
    CHECK(h.m.is_open());
}

TEST_CASE("heartbeats: no bytes for two intervals is a dead connection") {
    harness h;
    h.handshake(10);
    h.m.open_channel(1);
    h.pump();
    for (int i = 0; i < 19; ++i) h.advance(1s);
    CHECK(h.m.is_open());
    h.server_heartbeat();  // the peer is alive: the 20 s start again
    for (int i = 0; i < 19; ++i) h.advance(1s);
    CHECK(h.m.is_open());
    h.advance(1s);
    CHECK(h.m.finished());
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::heartbeat_timeout);
    CHECK(closed->detail.find("two heartbeat intervals of 10 s") != std::string::npos);
    auto open = h.take_op(1);
    REQUIRE(open);
    CHECK(open->ec == amqp::errc::heartbeat_timeout);
    CHECK_FALSE(h.m.next_deadline());
}

TEST_CASE("heartbeats off: no deadline at all") {
    machine_config cfg;
    cfg.heartbeat = 0;
    harness h(cfg);
    h.handshake(60);
    CHECK(h.m.limits().heartbeat == 0);
    CHECK_FALSE(h.m.next_deadline());
}

TEST_CASE("a stalled write does not make the machine spin on heartbeats") {
    harness h;
    h.handshake(10);
    h.advance(5s);
    const auto n = h.heartbeats_sent();
    // The driver does not take output (its write is stuck): one heartbeat waits.
    h.now += 5s;
    h.m.on_timer(h.now);
    REQUIRE(h.m.has_output());
    h.m.on_timer(h.now);
    auto dl = h.m.next_deadline();
    REQUIRE(dl);
    CHECK(*dl > h.now);  // only the receive deadline remains
    h.pump();
    CHECK(h.heartbeats_sent() == n + 1);
}

TEST_CASE("connection.blocked and unblocked become events") {
    harness h;
    h.handshake();
    h.server(0, wire::connection_blocked{"low on memory"});
    auto b = h.take<ev_blocked>();
    REQUIRE(b);
    CHECK(b->blocked);
    CHECK(b->reason == "low on memory");
    CHECK(h.m.blocked());
    h.server(0, wire::connection_unblocked{});
    auto u = h.take<ev_blocked>();
    REQUIRE(u);
    CHECK_FALSE(u->blocked);
    CHECK_FALSE(h.m.blocked());
}

TEST_CASE("client close: close, then close-ok; pending operations fail at once") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.request(ch, wire::queue_declare{0, "q"}, 2);
    h.m.close(3, h.now);
    h.pump();
    CHECK(h.last_sent_is<wire::connection_close>());
    auto declare = h.take_op(2);
    REQUIRE(declare);
    CHECK(declare->ec == amqp::errc::connection_closed);
    CHECK_FALSE(h.take_op(3));
    h.server(1, wire::queue_declare_ok{"q", 0, 0});  // discarded while closing
    h.server(0, wire::connection_close_ok{});
    auto done = h.take_op(3);
    REQUIRE(done);
    CHECK_FALSE(done->ec);
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::connection_closed);
    CHECK(h.m.finished());
}

TEST_CASE("client close: a broker that never answers is given up after close_timeout") {
    machine_config cfg;
    cfg.close_timeout = 2s;
    harness h(cfg);
    h.handshake();
    h.m.close(9, h.now);
    h.pump();
    h.advance(1s);
    CHECK_FALSE(h.m.finished());
    h.advance(1s);
    CHECK(h.m.finished());
    REQUIRE(h.take_op(9));
}

TEST_CASE("broker close (320 CONNECTION_FORCED): close-ok, every operation fails with 320") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.request(ch, wire::exchange_declare{0, "x", "fanout"}, 2);
    h.m.open_channel(3);
    h.pump();
    wire::connection_close c;
    c.reply_code = 320;
    c.reply_text = "CONNECTION_FORCED - Closed via management plugin";
    h.server(0, c);
    CHECK(h.last_sent_is<wire::connection_close_ok>());
    for (op_id op : {2, 3}) {
        auto done = h.take_op(op);
        REQUIRE(done);
        CHECK(done->ec == amqp::reply_code::connection_forced);
        CHECK(amqp::requires_reconnect(done->ec));
        REQUIRE(done->closed_by);
        CHECK(done->closed_by->code == 320);
        CHECK(done->closed_by->text == c.reply_text);
    }
    CHECK(h.count<ev_channel_closed>() == 2);
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    REQUIRE(closed->reply);
    CHECK(closed->reply->text == "CONNECTION_FORCED - Closed via management plugin");
}

TEST_CASE("garbage from the broker is a protocol error, answered with connection.close 501") {
    harness h;
    h.handshake();
    h.server_bytes({1, 0, 0, 0, 0, 0, 0, 0x00});  // method frame, empty payload, bad end
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::protocol_error);
    auto sent = h.sent_methods<wire::connection_close>();
    REQUIRE(sent.size() == 1);
    CHECK(sent[0].reply_code == 501);
}

TEST_CASE("requests before the connection is open fail with not_connected") {
    harness h;
    h.m.open_channel(1);
    h.pump();
    auto done = h.take_op(1);
    REQUIRE(done);
    CHECK(done->ec == amqp::errc::not_connected);
}
