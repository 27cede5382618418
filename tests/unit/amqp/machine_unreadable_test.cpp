// The connection machine and deliveries that cannot be read: a poison
// message (properties that do not decode, a body over max_body_size) reaches
// its consumer marked unreadable, can be acknowledged, and costs neither
// the channel nor the connection; the deliveries behind it arrive as usual.
// Framing faults, and a returned message that cannot be read, still end
// the connection. On the way out, a publish whose properties do not fit a
// frame is refused unsent (header_too_large), so the broker never sees it.
#include "machine_harness.hpp"

using namespace amqp_test;
namespace amqp = tarry::amqp;

namespace {

// Headers `depth` tables deep: {"a": {"a": ... {"a": 1}}}.
wire::field_table nested_headers(std::size_t depth) {
    wire::field_table t{{"a", std::int32_t{1}}};
    for (std::size_t i = 1; i < depth; ++i) t = wire::field_table{{"a", std::move(t)}};
    return t;
}

// A consumer (id 77, tag "ctag") on channel 1 of an open connection.
channel_ref consuming(harness& h) {
    h.handshake(60, 4096);
    auto ch = h.open_channel(1);
    h.m.consume(ch, wire::basic_consume{0, "jobs", "", false, false, false, false, {}}, 2, 77);
    h.pump();
    h.server(1, wire::basic_consume_ok{"ctag"});
    REQUIRE(h.take_op(2));
    return ch;
}

std::vector<std::uint8_t> content_with(const wire::basic_properties& p, std::size_t body) {
    return harness::content_frames(1, p, std::vector<std::uint8_t>(body, 0x61));
}

}  // namespace

TEST_CASE("a delivery whose headers nest 40 deep reaches the consumer unreadable; the next one reads") {
    for (std::size_t chunk : {std::size_t{0}, std::size_t{1}, std::size_t{700}}) {
        CAPTURE(chunk);
        harness h;
        h.chunk = chunk;
        auto ch = consuming(h);

        wire::basic_properties poison;
        poison.message_id = "poison";
        poison.headers = nested_headers(40);
        wire::basic_properties fine;
        fine.message_id = "fine";
        // The poison one and a normal one in the same read.
        h.server_bytes(cat(cat(harness::method_frame(1, wire::basic_deliver{"ctag", 1, false, "", "jobs"}),
                               content_with(poison, 6000)),
                           cat(harness::method_frame(1, wire::basic_deliver{"ctag", 2, false, "", "jobs"}),
                               content_with(fine, 10))));

        auto d = h.take<ev_delivery>();
        REQUIRE(d);
        CHECK(d->consumer == 77);
        CHECK(d->method.delivery_tag == 1);
        REQUIRE(d->content.unreadable);
        CHECK(d->content.unreadable->error == wire::errc::table_too_deep);
        REQUIRE(d->content.unreadable->raw_properties);
        // The raw block is the header frame's payload after its 12 bytes of fields.
        const auto frames = content_with(poison, 6000);
        const std::size_t header_payload = (std::size_t{frames[3]} << 24 | std::size_t{frames[4]} << 16 |
                                            std::size_t{frames[5]} << 8 | frames[6]);
        CHECK(d->content.unreadable->raw_properties->size() == header_payload - 12);
        CHECK(std::equal(d->content.unreadable->raw_properties->begin(),
                         d->content.unreadable->raw_properties->end(), frames.begin() + 7 + 12));
        CHECK(d->content.body.size() == 6000);

        auto next = h.take<ev_delivery>();
        REQUIRE(next);
        CHECK(next->method.delivery_tag == 2);
        CHECK_FALSE(next->content.unreadable);
        CHECK(next->content.properties == fine);

        CHECK(h.m.is_open());
        CHECK(h.count<ev_connection_closed>() == 0);
        CHECK(h.count<ev_channel_closed>() == 0);
        CHECK(h.sent_methods<wire::connection_close>().empty());

        // The poison one is settled like any other.
        h.m.send(ch, wire::basic_ack{1, false}, 3);
        h.pump();
        CHECK(h.last_sent<wire::basic_ack>() != nullptr);
        REQUIRE(h.take_op(3));
    }
}

TEST_CASE("a delivery over max_body_size reaches the consumer unreadable, body dropped") {
    machine_config cfg;
    cfg.max_body_size = 1000;
    harness h(cfg);
    consuming(h);
    wire::basic_properties p;
    p.message_id = "big";
    h.server_bytes(cat(harness::method_frame(1, wire::basic_deliver{"ctag", 1, false, "", "jobs"}),
                       content_with(p, 9000)));  // three body frames at frame_max 4096
    h.server_with_content(1, wire::basic_deliver{"ctag", 2, false, "", "jobs"}, p, std::vector<std::uint8_t>(1000, 1));
    auto d = h.take<ev_delivery>();
    REQUIRE(d);
    REQUIRE(d->content.unreadable);
    CHECK(d->content.unreadable->error == wire::errc::body_too_large);
    CHECK(d->content.unreadable->body_dropped);
    CHECK(d->content.unreadable->body_size == 9000);
    CHECK(d->content.properties == p);
    CHECK(d->content.body.empty());
    auto next = h.take<ev_delivery>();
    REQUIRE(next);
    CHECK_FALSE(next->content.unreadable);
    CHECK(next->content.body.size() == 1000);
    CHECK(h.m.is_open());
}

TEST_CASE("basic.get-ok with properties that do not decode completes the get, unreadable") {
    harness h;
    h.handshake(60, 4096);
    auto ch = h.open_channel(1);
    h.m.request(ch, wire::basic_get{0, "q", false}, 2);
    h.pump();
    wire::basic_properties poison;
    poison.headers = nested_headers(33);
    h.server_bytes(cat(harness::method_frame(1, wire::basic_get_ok{4, false, "", "q", 0}), content_with(poison, 3)));
    auto got = h.take_op(2);
    REQUIRE(got);
    CHECK_FALSE(got->ec);
    REQUIRE(got->content);
    REQUIRE(got->content->unreadable);
    CHECK(got->content->unreadable->error == wire::errc::table_too_deep);
    CHECK(h.m.is_open());
}

TEST_CASE("a returned message that cannot be read still ends the connection") {
    harness h;
    h.handshake(60, 4096);
    h.open_channel(1);
    wire::basic_properties poison;
    poison.headers = nested_headers(40);
    h.server_bytes(cat(harness::method_frame(1, wire::basic_return{312, "NO_ROUTE", "", "nowhere"}),
                       content_with(poison, 3)));
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::protocol_error);
    CHECK_MESSAGE(closed->detail.find("returned message") != std::string::npos, closed->detail);
    CHECK(h.count<ev_return>() == 0);
}

TEST_CASE("a content header whose fields are wrong is still a connection error") {
    harness h;
    consuming(h);
    auto frames = cat(harness::method_frame(1, wire::basic_deliver{"ctag", 1, false, "", "jobs"}),
                      content_with({}, 3));
    const std::size_t header_at = harness::method_frame(1, wire::basic_deliver{"ctag", 1, false, "", "jobs"}).size();
    frames[header_at + 7 + 1] = 61;  // class 61
    h.server_bytes(frames);
    auto closed = h.take<ev_connection_closed>();
    REQUIRE(closed);
    CHECK(closed->ec == amqp::errc::protocol_error);
    CHECK(h.sent_methods<wire::connection_close>().at(0).reply_code == 505);
    CHECK(h.count<ev_delivery>() == 0);
}

TEST_CASE("a publish whose properties do not fit a frame is refused unsent: header_too_large") {
    harness h;
    h.handshake(60, 4096);
    auto ch = h.open_channel(1);
    const std::size_t before = h.sent.size();
    wire::basic_properties p;
    p.headers = wire::field_table{{"pad", std::string(4096 - 8 - 12 - 2 - 4 - 9 + 1, 'p')}};
    h.m.publish(ch, wire::basic_publish{0, "", "q"}, p, {}, 2);
    h.pump();
    auto refused = h.take_op(2);
    REQUIRE(refused);
    CHECK(refused->ec == amqp::errc::header_too_large);
    CHECK_MESSAGE(refused->detail.find("above frame_max 4096") != std::string::npos, refused->detail);
    CHECK(h.sent.size() == before);
    CHECK(h.m.is_open());

    // One byte less fits exactly.
    p.headers = wire::field_table{{"pad", std::string(4096 - 8 - 12 - 2 - 4 - 9, 'p')}};
    h.m.publish(ch, wire::basic_publish{0, "", "q"}, p, {}, 3);
    h.pump();
    auto sent = h.take_op(3);
    REQUIRE(sent);
    CHECK_FALSE(sent->ec);
    REQUIRE(h.sent.back().type == wire::frame_type::header);
    CHECK(h.sent.back().payload.size() + 8 == 4096);
}
