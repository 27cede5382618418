// Content reassembly: the happy paths and every protocol violation.
#include "bytes.hpp"

#include "tarry/amqp/wire/content_assembler.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace tarry::amqp::wire;
using wire_test::bytes;
using wire_test::contains;
using wire_test::hex;

namespace {

// The frames encode_content produces for this content.
std::vector<frame> content_frames(std::uint16_t channel, const basic_properties& p,
                                  const bytes& body, std::uint32_t frame_max = 4096) {
    bytes stream;
    REQUIRE_FALSE(encode_content(stream, channel, p, body, frame_max));
    frame_parser parser(frame_max);
    parser.feed(stream);
    std::vector<frame> out;
    while (auto f = parser.next()) out.push_back(f->to_frame());
    REQUIRE_FALSE(parser.error());
    return out;
}

frame_view view(const frame& f) { return {f.type, f.channel, f.payload}; }

frame header_frame(std::uint16_t channel, const content_header& h) {
    frame f{frame_type::header, channel, {}};
    byte_writer w(f.payload);
    encode_content_header(w, h);
    REQUIRE(w.ok());
    return f;
}

frame body_frame(std::uint16_t channel, bytes payload) {
    return {frame_type::body, channel, std::move(payload)};
}

const frame method_frame{frame_type::method, 1, hex("00 3c 00 3c")};

}  // namespace

TEST_SUITE("wire.content_assembler") {

TEST_CASE("header then body frames give the whole content") {
    basic_properties p;
    p.message_id = "m1";
    p.headers = field_table{{"perform_job_at", std::int64_t{1700000000}}};
    bytes body(10000);
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<std::uint8_t>(i);
    const auto frames = content_frames(1, p, body);
    REQUIRE(frames.size() == 1 + 3);

    content_assembler a(1);
    CHECK_FALSE(a.in_progress());
    REQUIRE_FALSE(a.expect_content());
    CHECK(a.in_progress());
    for (const auto& f : frames) {
        CHECK_FALSE(a.ready());
        REQUIRE_FALSE(a.on_frame(view(f)));
    }
    CHECK(a.body_size() == body.size());
    CHECK(a.received() == body.size());
    REQUIRE(a.ready());
    CHECK_FALSE(a.in_progress());
    const message_content c = a.take();
    CHECK(c.properties == p);
    CHECK(c.body == body);
    CHECK_FALSE(a.ready());
    CHECK_FALSE(a.in_progress());
}

TEST_CASE("an empty body is complete at the header") {
    content_assembler a(2);
    REQUIRE_FALSE(a.expect_content());
    const auto frames = content_frames(2, {}, {});
    REQUIRE(frames.size() == 1);
    REQUIRE_FALSE(a.on_frame(view(frames[0])));
    REQUIRE(a.ready());
    CHECK(a.take().body.empty());
}

TEST_CASE("body sizes at the frame_max boundaries reassemble exactly") {
    for (std::size_t n : {std::size_t{4088}, std::size_t{4089}, std::size_t{8176},
                          std::size_t{8177}, std::size_t{1}}) {
        CAPTURE(n);
        const bytes body(n, 0x5a);
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        for (const auto& f : content_frames(1, {}, body)) REQUIRE_FALSE(a.on_frame(view(f)));
        REQUIRE(a.ready());
        CHECK(a.take().body == body);
    }
}

TEST_CASE("contents back to back, with methods in between") {
    content_assembler a(1);
    for (int i = 0; i < 3; ++i) {
        CHECK_FALSE(a.on_frame(view(method_frame)));  // not its business when idle
        REQUIRE_FALSE(a.expect_content());
        const bytes body(static_cast<std::size_t>(i) * 5000, static_cast<std::uint8_t>(i));
        for (const auto& f : content_frames(1, {}, body)) REQUIRE_FALSE(a.on_frame(view(f)));
        REQUIRE(a.ready());
        CHECK(a.take().body == body);
    }
}

TEST_CASE("a frame of the wrong type where content is due") {
    SUBCASE("method instead of header") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        CHECK(a.on_frame(view(method_frame)) == errc::unexpected_frame);
        CHECK_MESSAGE(contains(a.detail(), "method frame where the content header was due"),
                      a.detail());
    }
    SUBCASE("body instead of header") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        CHECK(a.on_frame(view(body_frame(1, hex("00")))) == errc::unexpected_frame);
    }
    SUBCASE("method in the middle of the body") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        content_header h;
        h.body_size = 10;
        REQUIRE_FALSE(a.on_frame(view(header_frame(1, h))));
        REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(4)))));
        CHECK(a.on_frame(view(method_frame)) == errc::unexpected_frame);
        CHECK_MESSAGE(contains(a.detail(), "after 4 of 10 body bytes"), a.detail());
    }
    SUBCASE("a second header in the middle of the body") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        content_header h;
        h.body_size = 10;
        REQUIRE_FALSE(a.on_frame(view(header_frame(1, h))));
        CHECK(a.on_frame(view(header_frame(1, h))) == errc::unexpected_frame);
    }
    SUBCASE("header or body with no content-bearing method") {
        content_assembler a(1);
        CHECK(a.on_frame(view(header_frame(1, {}))) == errc::unexpected_frame);
        content_assembler b(1);
        CHECK(b.on_frame(view(body_frame(1, hex("00")))) == errc::unexpected_frame);
        CHECK_MESSAGE(contains(b.detail(), "no content-bearing method"), b.detail());
    }
}

TEST_CASE("a frame of another channel") {
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    CHECK(a.on_frame(view(header_frame(2, {}))) == errc::unexpected_frame);
    CHECK_MESSAGE(contains(a.detail(), "channel 2"), a.detail());
}

TEST_CASE("a second content-bearing method before the content is complete or taken") {
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    CHECK(a.expect_content() == errc::unexpected_frame);

    content_assembler b(1);
    REQUIRE_FALSE(b.expect_content());
    REQUIRE_FALSE(b.on_frame(view(header_frame(1, {}))));
    REQUIRE(b.ready());
    CHECK(b.expect_content() == errc::unexpected_frame);
    CHECK_MESSAGE(contains(b.detail(), "not yet taken"), b.detail());
}

TEST_CASE("bad class or weight in the header") {
    content_header h;
    h.class_id = 50;
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    CHECK(a.on_frame(view(header_frame(1, h))) == errc::bad_content_header);
    CHECK_MESSAGE(contains(a.detail(), "class 50"), a.detail());

    h.class_id = 60;
    h.weight = 3;
    content_assembler b(1);
    REQUIRE_FALSE(b.expect_content());
    CHECK(b.on_frame(view(header_frame(1, h))) == errc::bad_content_header);
}

TEST_CASE("a malformed header payload reports the decoder's error") {
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    CHECK(a.on_frame({frame_type::header, 1, hex("00 3c 00 00 00 00")}) == errc::truncated);
    CHECK_MESSAGE(contains(a.detail(), "content header"), a.detail());
}

TEST_CASE("more body bytes than declared") {
    content_header h;
    h.body_size = 5;
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    REQUIRE_FALSE(a.on_frame(view(header_frame(1, h))));
    REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(3)))));
    CHECK(a.on_frame(view(body_frame(1, bytes(3)))) == errc::body_too_large);
    CHECK_MESSAGE(contains(a.detail(), "2 left"), a.detail());
    CHECK_FALSE(a.ready());
}

TEST_CASE("body_size above max_body_size is no framing error (content_unreadable_test.cpp)") {
    content_header h;
    h.body_size = 11;
    content_assembler a(1, 10);
    REQUIRE_FALSE(a.expect_content());
    CHECK_FALSE(a.on_frame(view(header_frame(1, h))));
    CHECK(a.in_progress());

    h.body_size = 10;
    content_assembler b(1, 10);
    REQUIRE_FALSE(b.expect_content());
    CHECK_FALSE(b.on_frame(view(header_frame(1, h))));

    // The default limit: 512 MiB.
    CHECK(content_assembler::default_max_body_size == 512ull * 1024 * 1024);
}

TEST_CASE("a header announcing the maximum allocates only as bytes arrive") {
    content_header h;
    h.body_size = content_assembler::default_max_body_size;
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    REQUIRE_FALSE(a.on_frame(view(header_frame(1, h))));
    REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(100)))));
    CHECK(a.received() == 100);
    CHECK(a.in_progress());
}

TEST_CASE("errors are sticky until reset; take() when not ready changes nothing") {
    content_assembler a(1);
    CHECK(a.take().body.empty());
    REQUIRE_FALSE(a.expect_content());
    CHECK(a.on_frame(view(method_frame)) == errc::unexpected_frame);
    const std::string first = a.detail();
    CHECK(a.expect_content() == errc::unexpected_frame);
    CHECK(a.on_frame(view(header_frame(1, {}))) == errc::unexpected_frame);
    CHECK(a.detail() == first);
    CHECK_FALSE(a.ready());
    CHECK_FALSE(a.in_progress());

    a.reset();
    CHECK_FALSE(a.error());
    CHECK(a.detail().empty());
    REQUIRE_FALSE(a.expect_content());
    REQUIRE_FALSE(a.on_frame(view(header_frame(1, {}))));
    CHECK(a.ready());
}

}  // TEST_SUITE
