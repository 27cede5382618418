// Frame envelopes, the protocol header, heartbeats and content splitting.
#include "bytes.hpp"

#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace tarry::amqp::wire;
using wire_test::bytes;
using wire_test::contains;
using wire_test::hex;
using wire_test::to_hex;

namespace {

// Every frame in `stream`, which must parse cleanly with no limit.
std::vector<frame> parse_all(const bytes& stream) {
    frame_parser p(0);
    p.feed(stream);
    std::vector<frame> out;
    while (auto f = p.next()) out.push_back(f->to_frame());
    REQUIRE_MESSAGE(!p.error(), p.detail());
    CHECK(p.buffered() == 0);
    return out;
}

bytes body_of(std::size_t n) {
    bytes b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i * 7 + 1);
    return b;
}

}  // namespace

TEST_SUITE("wire.frame") {

TEST_CASE("frame types and their names") {
    CHECK(static_cast<int>(frame_type::method) == 1);
    CHECK(static_cast<int>(frame_type::header) == 2);
    CHECK(static_cast<int>(frame_type::body) == 3);
    CHECK(static_cast<int>(frame_type::heartbeat) == 8);
    CHECK(std::string(to_string(frame_type::method)) == "method");
    CHECK(std::string(to_string(frame_type::header)) == "header");
    CHECK(std::string(to_string(frame_type::body)) == "body");
    CHECK(std::string(to_string(frame_type::heartbeat)) == "heartbeat");
    CHECK(std::string(to_string(static_cast<frame_type>(4))) == "unknown");
}

TEST_CASE("the protocol header and its check") {
    CHECK(to_hex(protocol_header) == "41 4d 51 50 00 00 09 01");
    std::string detail;
    CHECK_FALSE(check_protocol_header(protocol_header, &detail));

    CHECK(check_protocol_header(hex("41 4d 51"), &detail) == errc::truncated);
    CHECK(check_protocol_header({}, &detail) == errc::truncated);

    CHECK(check_protocol_header(hex("41 4d 51 50 00 00 09 00"), &detail) ==
          errc::bad_protocol_header);
    CHECK_MESSAGE(contains(detail, "AMQP 00 00 09 00"), detail);

    CHECK(check_protocol_header(wire_test::of("HTTP/1.1"), &detail) == errc::bad_protocol_header);
    CHECK_MESSAGE(contains(detail, "HTTP"), detail);
    CHECK(check_protocol_header(hex("16 03 01 02 00 01 00 01"), &detail) ==
          errc::bad_protocol_header);
    CHECK_MESSAGE(contains(detail, "16 03 01 02"), detail);
    CHECK(check_protocol_header(hex("01"), nullptr) == errc::bad_protocol_header);

    CHECK(check_protocol_header(hex("41 4d 51 50 00 00 09 01 01"), &detail) ==
          errc::trailing_bytes);
}

TEST_CASE("encode_frame golden bytes") {
    bytes out;
    REQUIRE_FALSE(encode_frame(out, frame_type::method, 1, hex("00 0a 00 0a")));
    CHECK(to_hex(out) == "01 00 01 00 00 00 04 00 0a 00 0a ce");
    // Appends; channel is big-endian.
    REQUIRE_FALSE(encode_frame(out, frame{frame_type::body, 0x1234, {}}));
    CHECK(to_hex(out) == "01 00 01 00 00 00 04 00 0a 00 0a ce 03 12 34 00 00 00 00 ce");
}

TEST_CASE("heartbeat golden bytes") {
    bytes out{0xaa};
    encode_heartbeat(out);
    CHECK(to_hex(out) == "aa 08 00 00 00 00 00 00 ce");
}

TEST_CASE("begin_frame / end_frame write in place and respect frame_max") {
    bytes out = hex("ff");
    const auto at = begin_frame(out, frame_type::method, 7);
    CHECK(at == 1);
    out.insert(out.end(), 4088, 0x11);  // payload + 8 == 4096
    REQUIRE_FALSE(end_frame(out, at, 4096));
    CHECK(out.size() == 1 + 4096);
    CHECK(out.back() == frame_end);

    const auto at2 = begin_frame(out, frame_type::method, 7);
    out.insert(out.end(), 4089, 0x11);  // one byte too many
    CHECK(end_frame(out, at2, 4096) == errc::frame_too_large);
    CHECK(out.size() == 1 + 4096);  // the failed frame is gone
}

TEST_CASE("encode_content splits the body at frame_max - 8") {
    const std::uint32_t frame_max = 4096;
    const std::size_t chunk = frame_max - 8;
    basic_properties props;
    props.content_type = "application/octet-stream";

    auto check_split = [&](std::size_t body_size, std::vector<std::size_t> expected_pieces) {
        CAPTURE(body_size);
        const bytes body = body_of(body_size);
        bytes out;
        REQUIRE_FALSE(encode_content(out, 5, props, body, frame_max));
        const auto frames = parse_all(out);
        REQUIRE(frames.size() == 1 + expected_pieces.size());

        CHECK(frames[0].type == frame_type::header);
        CHECK(frames[0].channel == 5);
        byte_reader r(frames[0].payload);
        const content_header h = decode_content_header(r);
        REQUIRE(r.ok());
        CHECK(h.body_size == body_size);
        CHECK(h.properties == props);

        bytes joined;
        for (std::size_t i = 0; i < expected_pieces.size(); ++i) {
            const frame& f = frames[i + 1];
            CHECK(f.type == frame_type::body);
            CHECK(f.channel == 5);
            CHECK(f.payload.size() == expected_pieces[i]);
            CHECK(f.payload.size() + frame_overhead <= frame_max);
            joined.insert(joined.end(), f.payload.begin(), f.payload.end());
        }
        CHECK(joined == body);
    };

    SUBCASE("empty body: a header and no body frame") { check_split(0, {}); }
    SUBCASE("one byte") { check_split(1, {1}); }
    SUBCASE("exactly frame_max - 8: one full frame") { check_split(chunk, {chunk}); }
    SUBCASE("one byte more: a full frame and a 1-byte frame") { check_split(chunk + 1, {chunk, 1}); }
    SUBCASE("three full frames") { check_split(3 * chunk, {chunk, chunk, chunk}); }
    SUBCASE("three full frames and one byte less") {
        check_split(3 * chunk - 1, {chunk, chunk, chunk - 1});
    }
}

TEST_CASE("encode_content with frame_max 0 sends one body frame") {
    const bytes body = body_of(100000);
    bytes out;
    REQUIRE_FALSE(encode_content(out, 1, {}, body, 0));
    const auto frames = parse_all(out);
    REQUIRE(frames.size() == 2);
    CHECK(frames[1].payload == body);
}

TEST_CASE("encode_content golden bytes for a small content") {
    bytes out;
    basic_properties p;
    p.delivery_mode = 2;
    REQUIRE_FALSE(encode_content(out, 1, p, wire_test::of("hi"), 131072));
    CHECK(to_hex(out) ==
          "02 00 01 00 00 00 0f 00 3c 00 00 00 00 00 00 00 00 00 02 10 00 02 ce"
          " 03 00 01 00 00 00 02 68 69 ce");
}

TEST_CASE("encode_content errors leave the output untouched") {
    bytes out = hex("01 02");
    std::string detail;

    CHECK(encode_content(out, 1, {}, wire_test::of("x"), 100, &detail) == errc::invalid_value);
    CHECK_MESSAGE(contains(detail, "100"), detail);
    CHECK(out == hex("01 02"));

    basic_properties too_long;
    too_long.message_id = std::string(300, 'm');
    CHECK(encode_content(out, 1, too_long, wire_test::of("x"), 4096, &detail) ==
          errc::string_too_long);
    CHECK_MESSAGE(contains(detail, "message_id"), detail);
    CHECK(out == hex("01 02"));

    basic_properties big;
    big.headers = field_table{{"blob", std::string(5000, 'b')}};
    CHECK(encode_content(out, 1, big, wire_test::of("x"), 4096, &detail) ==
          errc::frame_too_large);
    CHECK_MESSAGE(contains(detail, "header frame"), detail);
    CHECK(out == hex("01 02"));
    // The same header fits a larger frame_max.
    CHECK_FALSE(encode_content(out, 1, big, wire_test::of("x"), 131072));
}

}  // TEST_SUITE
