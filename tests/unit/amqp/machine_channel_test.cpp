// The connection machine, channel level: opening and closing channels, one
// synchronous request at a time, confirms, consumers, content assembly,
// basic.get, returns, and channel errors that leave the rest working.
#include "machine_harness.hpp"

using namespace amqp_test;
namespace amqp = tarry::amqp;

namespace {
std::vector<std::uint8_t> body_of(std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 7 + 3);
    return b;
}
}  // namespace

TEST_CASE("channels take the lowest free number; a closed one is reused") {
    harness h;
    h.handshake();
    auto c1 = h.open_channel(1);
    auto c2 = h.open_channel(2);
    CHECK(c1.number == 1);
    CHECK(c2.number == 2);
    h.m.close_channel(c1, 3);
    h.pump();
    REQUIRE(h.last_sent_is<wire::channel_close>());
    CHECK(h.sent.back().channel == 1);
    h.server(1, wire::channel_close_ok{});
    auto done = h.take_op(3);
    REQUIRE(done);
    CHECK_FALSE(done->ec);
    auto closed = h.take<ev_channel_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::channel_closed);
    auto c3 = h.open_channel(4);
    CHECK(c3.number == 1);
    CHECK(c3.serial != c1.serial);
    // The old handle does not reach the new channel on the same number.
    h.m.request(c1, wire::basic_qos{0, 10, false}, 5);
    h.pump();
    auto stale = h.take_op(5);
    REQUIRE(stale);
    CHECK(stale->ec == amqp::errc::channel_closed);
}

TEST_CASE("channel_max bounds the channels") {
    harness h;
    h.handshake(60, 131072, 2);
    h.open_channel(1);
    h.open_channel(2);
    h.m.open_channel(3);
    h.pump();
    auto done = h.take_op(3);
    REQUIRE(done);
    CHECK(done->ec == amqp::errc::channel_limit_reached);
}

TEST_CASE("one synchronous request at a time; later frames wait behind it, in order") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    const auto before = h.sent.size();
    h.m.request(ch, wire::queue_declare{0, "a"}, 10);
    h.m.publish(ch, wire::basic_publish{0, "", "a"}, {}, body_of(3), 11);
    h.m.request(ch, wire::queue_declare{0, "b"}, 12);
    h.m.send(ch, wire::basic_ack{5, false}, 13);
    h.pump();
    REQUIRE(h.sent.size() == before + 1);  // only the first declare
    CHECK(h.last_sent<wire::queue_declare>()->queue == "a");
    CHECK(h.events.empty());
    h.server(1, wire::queue_declare_ok{"a", 4, 1});
    auto a = h.take_op(10);
    REQUIRE(a);
    REQUIRE(a->reply);
    CHECK(std::get<wire::queue_declare_ok>(*a->reply).message_count == 4);
    auto pub = h.take_op(11);  // not a confirm channel: done once sent
    REQUIRE(pub);
    CHECK_FALSE(pub->ec);
    CHECK(h.last_sent<wire::queue_declare>()->queue == "b");
    CHECK_FALSE(h.take_op(13));  // the ack waits behind declare "b"
    h.server(1, wire::queue_declare_ok{"b", 0, 0});
    REQUIRE(h.take_op(12));
    REQUIRE(h.take_op(13));
    CHECK(h.last_sent<wire::basic_ack>()->delivery_tag == 5);
}

TEST_CASE("confirms: acks (single and multiple) and nacks reach each publish exactly once") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.request(ch, wire::confirm_select{}, 2);
    for (op_id op = 10; op < 15; ++op) h.m.publish(ch, wire::basic_publish{0, "", "q"}, {}, body_of(1), op);
    h.pump();
    CHECK(h.sent_methods<wire::basic_publish>().empty());  // held behind select
    h.server(1, wire::confirm_select_ok{});
    REQUIRE(h.take_op(2));
    CHECK(h.sent_methods<wire::basic_publish>().size() == 5);
    CHECK(h.m.unconfirmed(ch) == 5);
    h.server(1, wire::basic_ack{2, true});
    REQUIRE(h.take_op(10));
    REQUIRE(h.take_op(11));
    CHECK_FALSE(h.take_op(12));
    h.server(1, wire::basic_nack{4, false, false});
    auto n = h.take_op(13);
    REQUIRE(n);
    CHECK(n->ec == amqp::errc::publish_nacked);
    h.server(1, wire::basic_ack{5, true});
    auto a12 = h.take_op(12);
    auto a14 = h.take_op(14);
    REQUIRE(a12);
    REQUIRE(a14);
    CHECK_FALSE(a12->ec);
    CHECK_FALSE(a14->ec);
    CHECK(h.m.unconfirmed(ch) == 0);
    CHECK(h.events.empty());
}

TEST_CASE("a confirm for a publish never sent is a protocol error") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.request(ch, wire::confirm_select{}, 2);
    h.pump();
    h.server(1, wire::confirm_select_ok{});
    h.server(1, wire::basic_ack{1, false});
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::protocol_error);
}

TEST_CASE("consume: multi-frame deliveries reach the consumer; the broker's cancel ends it") {
    for (std::size_t chunk : {std::size_t{0}, std::size_t{1}, std::size_t{1000}}) {
        CAPTURE(chunk);
        harness h;
        h.chunk = chunk;
        h.handshake(60, 4096);
        auto ch = h.open_channel(1);
        h.m.consume(ch, wire::basic_consume{0, "jobs", "", false, false, false, true, {}}, 2, 77);
        h.pump();
        auto sent = h.last_sent<wire::basic_consume>();
        REQUIRE(sent);
        CHECK_FALSE(sent->no_wait);  // we need consume-ok's tag
        h.server(1, wire::basic_consume_ok{"ctag-1"});
        auto ok = h.take_op(2);
        REQUIRE(ok);
        CHECK(std::get<wire::basic_consume_ok>(*ok->reply).consumer_tag == "ctag-1");

        wire::basic_properties p;
        p.message_id = "m1";
        p.headers = wire::field_table{{"perform_job_at", std::int64_t{1700000000}}};
        const auto body = body_of(10000);  // three body frames at frame_max 4096
        h.server_with_content(1, wire::basic_deliver{"ctag-1", 1, true, "ex", "rk"}, p, body);
        auto d = h.take<ev_delivery>();
        REQUIRE(d);
        CHECK(d->consumer == 77);
        CHECK(d->method.delivery_tag == 1);
        CHECK(d->method.redelivered);
        CHECK(d->content.properties == p);
        CHECK(d->content.body == body);

        h.server_with_content(1, wire::basic_deliver{"ctag-1", 2, false, "", "jobs"}, {}, {});
        auto e = h.take<ev_delivery>();
        REQUIRE(e);
        CHECK(e->content.body.empty());

        h.server(1, wire::basic_cancel{"ctag-1", true});
        auto ended = h.take<ev_consumer_ended>();
        REQUIRE(ended);
        CHECK(ended->consumer == 77);
        CHECK(ended->ec == amqp::errc::consumer_cancelled);
        CHECK(h.m.is_open());
    }
}

TEST_CASE("consumer cancelled by us: cancel-ok ends it without an error") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.consume(ch, wire::basic_consume{0, "q", "mine"}, 2, 5);
    h.pump();
    h.server(1, wire::basic_consume_ok{"mine"});
    h.m.request(ch, wire::basic_cancel{"mine", false}, 3);
    h.pump();
    h.server(1, wire::basic_cancel_ok{"mine"});
    auto ended = h.take<ev_consumer_ended>();
    REQUIRE(ended);
    CHECK_FALSE(ended->ec);
    REQUIRE(h.take_op(3));
}

TEST_CASE("fault: our cancel crossing the broker's (queue deleted): a second cancel-ok is ignored, not a protocol error") {
    // RabbitMQ 3.10 answered both cancels of a quorum queue's consumer
    // with cancel-ok (seen in a frame trace, 1 time in 150).
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.consume(ch, wire::basic_consume{0, "q", "mine"}, 2, 5);
    h.pump();
    h.server(1, wire::basic_consume_ok{"mine"});
    h.m.request(ch, wire::basic_cancel{"mine", false}, 3);
    h.pump();
    h.server(1, wire::basic_cancel{"mine", true});  // the queue is deleted
    h.server(1, wire::basic_cancel_ok{"mine"});
    h.server(1, wire::basic_cancel_ok{"mine"});     // a second answer nothing waits for
    CHECK(h.m.is_open());
    CHECK_FALSE(h.take<ev_connection_closed>());
    REQUIRE(h.take_op(3));
    // The channel goes on working.
    h.m.request(ch, wire::basic_qos{0, 10, false}, 4);
    h.pump();
    h.server(1, wire::basic_qos_ok{});
    CHECK(h.take_op(4));
}

TEST_CASE("basic.get: get-ok with content, and get-empty") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.request(ch, wire::basic_get{0, "q", false}, 2);
    h.pump();
    h.server_with_content(1, wire::basic_get_ok{9, false, "", "q", 3}, {}, body_of(5));
    auto got = h.take_op(2);
    REQUIRE(got);
    REQUIRE(got->content);
    CHECK(got->content->body == body_of(5));
    CHECK(std::get<wire::basic_get_ok>(*got->reply).message_count == 3);
    h.m.request(ch, wire::basic_get{0, "q", false}, 3);
    h.pump();
    h.server(1, wire::basic_get_empty{});
    auto empty = h.take_op(3);
    REQUIRE(empty);
    CHECK_FALSE(empty->content);
    CHECK(std::holds_alternative<wire::basic_get_empty>(*empty->reply));
}

TEST_CASE("basic.return becomes an event with the returned content") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.publish(ch, wire::basic_publish{0, "", "nowhere", true}, {}, body_of(2), 2);
    h.pump();
    CHECK(h.last_sent<wire::basic_publish>() == nullptr);  // last frame is the body
    h.server_with_content(1, wire::basic_return{312, "NO_ROUTE", "", "nowhere"}, {}, body_of(2));
    auto r = h.take<ev_return>();
    REQUIRE(r);
    CHECK(r->method.reply_code == 312);
    CHECK(r->method.routing_key == "nowhere");
    CHECK(r->content.body == body_of(2));
}

TEST_CASE("a broker channel.close fails that channel only; others keep working") {
    harness h;
    h.handshake();
    auto bad = h.open_channel(1);
    auto good = h.open_channel(2);
    h.m.consume(good, wire::basic_consume{0, "q", "c"}, 3, 30);
    h.pump();
    h.server(2, wire::basic_consume_ok{"c"});
    REQUIRE(h.take_op(3));

    h.m.request(bad, wire::queue_declare{0, "missing", true}, 4);   // passive
    h.m.request(bad, wire::queue_purge{0, "x"}, 5);                 // held behind it
    h.pump();
    wire::channel_close c;
    c.reply_code = 404;
    c.reply_text = "NOT_FOUND - no queue 'missing' in vhost '/'";
    c.failing_class_id = 50;
    c.failing_method_id = 10;
    h.server(1, c);
    CHECK(h.last_sent_is<wire::channel_close_ok>());
    CHECK(h.sent.back().channel == 1);
    for (op_id op : {4, 5}) {
        auto done = h.take_op(op);
        REQUIRE(done);
        CHECK(done->ec == amqp::reply_code::not_found);
        CHECK_FALSE(amqp::requires_reconnect(done->ec));
        CHECK(done->detail.find("no queue 'missing'") != std::string::npos);
        // Each failed operation carries the broker's reply itself.
        REQUIRE(done->closed_by);
        CHECK(done->closed_by->code == 404);
        CHECK(done->closed_by->text == c.reply_text);
        CHECK(done->closed_by->method_id == 10);
    }
    auto closed = h.take<ev_channel_closed>();
    REQUIRE(closed);
    CHECK(closed->channel == bad);
    REQUIRE(closed->reply);
    CHECK(closed->reply->method_id == 10);

    h.server_with_content(2, wire::basic_deliver{"c", 1, false, "", "q"}, {}, body_of(1));
    auto d = h.take<ev_delivery>();
    REQUIRE(d);
    CHECK(d->consumer == 30);
    CHECK(h.m.is_open());
    h.m.request(bad, wire::basic_qos{0, 1, false}, 6);
    h.pump();
    auto after = h.take_op(6);
    REQUIRE(after);
    CHECK(after->ec == amqp::errc::channel_closed);
    CHECK_FALSE(after->closed_by);  // the close did not happen to this one
}

TEST_CASE("an operation's failure carries the close that ended it, never a later one") {
    harness h;
    h.handshake();
    auto first = h.open_channel(1);
    h.m.request(first, wire::queue_declare{0, "a", true}, 2);
    h.pump();
    wire::channel_close a;
    a.reply_code = 404;
    a.reply_text = "NOT_FOUND - no queue 'a' in vhost '/'";
    h.server(1, a);
    auto done_a = h.take_op(2);
    REQUIRE(done_a);
    REQUIRE(done_a->closed_by);
    CHECK(done_a->closed_by->text == a.reply_text);

    // The number comes back as another incarnation; its close is its own.
    auto second = h.open_channel(3);
    CHECK(second.number == first.number);
    CHECK(second.serial != first.serial);
    h.m.request(second, wire::queue_declare{0, "b", true}, 4);
    h.pump();
    wire::channel_close b;
    b.reply_code = 404;
    b.reply_text = "NOT_FOUND - no queue 'b' in vhost '/'";
    h.server(1, b);
    auto done_b = h.take_op(4);
    REQUIRE(done_b);
    REQUIRE(done_b->closed_by);
    CHECK(done_b->closed_by->text == b.reply_text);
    CHECK(done_a->closed_by->text == a.reply_text);

    // Our own close carries no broker reply; neither does success.
    auto third = h.open_channel(5);
    h.m.request(third, wire::basic_qos{0, 1, false}, 6);
    h.pump();
    h.server(third.number, wire::basic_qos_ok{});
    auto ok = h.take_op(6);
    REQUIRE(ok);
    CHECK_FALSE(ok->ec);
    CHECK_FALSE(ok->closed_by);
    h.m.request(third, wire::queue_declare{0, "c", true}, 7);
    h.m.close(8, h.now);
    h.pump();
    auto closed = h.take_op(7);
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::connection_closed);
    CHECK_FALSE(closed->closed_by);
}

TEST_CASE("a broker close crossing ours: close-ok for theirs, wait for ours") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.m.close_channel(ch, 2);
    h.pump();
    wire::channel_close c;
    c.reply_code = 406;
    h.server(1, c);
    CHECK(h.last_sent_is<wire::channel_close_ok>());
    CHECK_FALSE(h.take_op(2));
    h.m.open_channel(3);  // number 1 is still taken
    h.pump();
    CHECK(h.sent.back().channel == 2);
    h.server(1, wire::channel_close_ok{});
    REQUIRE(h.take_op(2));
}

TEST_CASE("the broker's channel.flow is answered and reported") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    h.server(1, wire::channel_flow{false});
    auto ok = h.last_sent<wire::channel_flow_ok>();
    REQUIRE(ok);
    CHECK_FALSE(ok->active);
    auto f = h.take<ev_flow>();
    REQUIRE(f);
    CHECK(f->channel == ch);
    CHECK_FALSE(f->active);
}

TEST_CASE("requests the codec cannot encode fail with invalid_argument, nothing sent") {
    harness h;
    h.handshake();
    auto ch = h.open_channel(1);
    const auto before = h.sent.size();
    h.m.request(ch, wire::queue_declare{0, std::string(256, 'q')}, 2);
    h.m.publish(ch, wire::basic_publish{0, "", std::string(300, 'k')}, {}, body_of(1), 3);
    h.pump();
    for (op_id op : {2, 3}) {
        auto done = h.take_op(op);
        REQUIRE(done);
        CHECK(done->ec == amqp::errc::invalid_argument);
        CHECK(done->detail.find("255") != std::string::npos);
    }
    CHECK(h.sent.size() == before);
    CHECK(h.m.is_open());
}

TEST_CASE("frames on a channel that is not open are a connection error (504)") {
    harness h;
    h.handshake();
    h.server(9, wire::basic_qos_ok{});
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::protocol_error);
    CHECK(h.sent_methods<wire::connection_close>().at(0).reply_code == 504);
}

TEST_CASE("a reply that answers nothing is a connection error") {
    harness h;
    h.handshake();
    h.open_channel(1);
    h.server(1, wire::queue_bind_ok{});
    CHECK(h.m.finished());
}

TEST_CASE("published frames follow frame_max: header + body frames of at most frame_max") {
    harness h;
    h.handshake(60, 4096);
    auto ch = h.open_channel(1);
    h.m.publish(ch, wire::basic_publish{0, "", "q"}, {}, body_of(10000), 2);
    h.pump();
    std::size_t bodies = 0, bytes = 0;
    for (const auto& f : h.sent) {
        if (f.type == wire::frame_type::body) {
            ++bodies;
            bytes += f.payload.size();
            CHECK(f.payload.size() <= 4096 - 8);
        }
    }
    CHECK(bodies == 3);
    CHECK(bytes == 10000);
}
