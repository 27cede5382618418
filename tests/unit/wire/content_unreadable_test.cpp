// Content that cannot be read is the message's problem, not the channel's:
// properties that do not decode and bodies over the limit complete as
// unreadable contents (raw properties kept, the body dropped unbuffered),
// the frames are consumed in order, and the next content reads normally.
// Faults of the framing stay errors.
#include "bytes.hpp"

#include "tarry/amqp/wire/content_assembler.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace tarry::amqp::wire;
using wire_test::bytes;
using wire_test::contains;
using wire_test::hex;

namespace {

frame_view view(const frame& f) { return {f.type, f.channel, f.payload}; }

// Headers `depth` tables deep: {"a": {"a": ... {"a": 1}}}.
field_table nested_headers(std::size_t depth) {
    field_table t{{"a", std::int32_t{1}}};
    for (std::size_t i = 1; i < depth; ++i) t = field_table{{"a", std::move(t)}};
    return t;
}

// A header frame whose payload is the fields (class 60, weight 0,
// body_size) then `block` as the properties, byte for byte.
frame header_with_block(std::uint16_t channel, std::uint64_t body_size, const bytes& block) {
    frame f{frame_type::header, channel, {}};
    byte_writer w(f.payload);
    w.u16(60);
    w.u16(0);
    w.u64(body_size);
    f.payload.insert(f.payload.end(), block.begin(), block.end());
    return f;
}

// The properties block encode_properties writes for `p`.
bytes block_of(const basic_properties& p) {
    bytes out;
    byte_writer w(out);
    encode_properties(w, p);
    REQUIRE(w.ok());
    return out;
}

frame body_frame(std::uint16_t channel, bytes payload) {
    return {frame_type::body, channel, std::move(payload)};
}

// Feeds a whole content (header with `block`, body in frames of `piece`).
void feed(content_assembler& a, const bytes& block, const bytes& body, std::size_t piece = 4088) {
    REQUIRE_FALSE(a.expect_content());
    REQUIRE_FALSE(a.on_frame(view(header_with_block(1, body.size(), block))));
    for (std::size_t off = 0; off < body.size(); off += piece) {
        const auto end = body.begin() + static_cast<std::ptrdiff_t>(std::min(body.size(), off + piece));
        REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(body.begin() + static_cast<std::ptrdiff_t>(off), end)))));
    }
}

// A readable content goes through `a` as it should.
void check_reads_next(content_assembler& a) {
    basic_properties p;
    p.message_id = "next";
    const bytes body(5000, 0x42);
    feed(a, block_of(p), body);
    REQUIRE(a.ready());
    const auto c = a.take();
    CHECK_FALSE(c.unreadable);
    CHECK(c.properties == p);
    CHECK(c.body == body);
}

}  // namespace

TEST_SUITE("wire.content_assembler.unreadable") {

TEST_CASE("headers nested 40 tables deep: unreadable, raw properties kept, body read, channel fine") {
    basic_properties p;
    p.message_id = "poison";
    p.headers = nested_headers(40);
    const bytes block = block_of(p);
    const bytes body(9000, 0x17);  // three body frames

    content_assembler a(1);
    feed(a, block, body);
    REQUIRE(a.ready());
    CHECK_FALSE(a.error());
    const message_content c = a.take();
    REQUIRE(c.unreadable);
    CHECK(c.unreadable->error == errc::table_too_deep);
    CHECK_MESSAGE(contains(c.unreadable->detail, "properties do not decode: "), c.unreadable->detail);
    CHECK_MESSAGE(contains(c.unreadable->detail, "nested deeper than 32"), c.unreadable->detail);
    REQUIRE(c.unreadable->raw_properties);
    CHECK(*c.unreadable->raw_properties == block);
    CHECK(c.unreadable->body_size == body.size());
    CHECK_FALSE(c.unreadable->body_dropped);
    CHECK(c.properties == basic_properties{});
    CHECK(c.body == body);

    check_reads_next(a);
}

TEST_CASE("each way properties fail to decode is the message's, with the decoder's error") {
    struct bad_block {
        const char* name;
        bytes block;
        errc error;
        const char* says;
    };
    const std::vector<bad_block> cases{
        {"continuation bit", hex("80 01 01 61"), errc::bad_content_header, "continuation"},
        {"bit 1", hex("00 02"), errc::bad_content_header, "0x0002"},
        {"unknown field tag", hex("20 00 00 00 00 03 01 6b 5a"), errc::bad_field_type, "'k'"},
        {"table longer than the block", hex("20 00 00 00 00 09 01 6b 49"), errc::truncated, "field table"},
        {"bytes after the last property", hex("08 00 07 00"), errc::trailing_bytes, "1 bytes"},
        {"no flags word", {}, errc::truncated, "need 2 bytes"},
    };
    for (const auto& bad : cases) {
        CAPTURE(bad.name);
        content_assembler a(1);
        feed(a, bad.block, bytes(10, 1));
        REQUIRE(a.ready());
        const auto c = a.take();
        REQUIRE(c.unreadable);
        CHECK(c.unreadable->error == bad.error);
        CHECK_MESSAGE(contains(c.unreadable->detail, bad.says), c.unreadable->detail);
        REQUIRE(c.unreadable->raw_properties);
        CHECK(*c.unreadable->raw_properties == bad.block);
        CHECK(c.body == bytes(10, 1));
        check_reads_next(a);
    }
}

TEST_CASE("a body over max_body_size is read and dropped frame by frame, never buffered") {
    basic_properties p;
    p.message_id = "big";
    const bytes body(10000, 0x33);
    content_assembler a(1, 4096);
    REQUIRE_FALSE(a.expect_content());
    REQUIRE_FALSE(a.on_frame(view(header_with_block(1, body.size(), block_of(p)))));
    CHECK(a.in_progress());
    for (std::size_t off = 0; off < body.size(); off += 1000) {
        REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(1000, 0x33)))));
        CHECK(a.received() == off + 1000);
    }
    REQUIRE(a.ready());
    const auto c = a.take();
    REQUIRE(c.unreadable);
    CHECK(c.unreadable->error == errc::body_too_large);
    CHECK_MESSAGE(contains(c.unreadable->detail, "body of 10000 bytes above max_body_size 4096, not kept"),
                  c.unreadable->detail);
    CHECK(c.unreadable->body_dropped);
    CHECK(c.unreadable->body_size == 10000);
    CHECK_FALSE(c.unreadable->raw_properties);
    CHECK(c.properties == p);  // the properties decoded: they are kept
    CHECK(c.body.empty());
    CHECK(c.body.capacity() == 0);

    // A body exactly at the limit is kept.
    const bytes at_limit(4096, 9);
    feed(a, block_of(p), at_limit);
    REQUIRE(a.ready());
    const auto kept = a.take();
    CHECK_FALSE(kept.unreadable);
    CHECK(kept.body == at_limit);
}

TEST_CASE("a header announcing 2^63 bytes over the limit allocates nothing") {
    content_assembler a(1);
    REQUIRE_FALSE(a.expect_content());
    REQUIRE_FALSE(a.on_frame(view(header_with_block(1, std::uint64_t{1} << 63, hex("00 00")))));
    REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(100)))));
    CHECK(a.received() == 100);
    CHECK(a.in_progress());
}

TEST_CASE("properties that do not decode and a body over the limit: both said, the first error kept") {
    content_assembler a(1, 10);
    feed(a, hex("00 02"), bytes(20, 5));
    REQUIRE(a.ready());
    const auto c = a.take();
    REQUIRE(c.unreadable);
    CHECK(c.unreadable->error == errc::bad_content_header);
    CHECK_MESSAGE(contains(c.unreadable->detail, "properties do not decode: "), c.unreadable->detail);
    CHECK_MESSAGE(contains(c.unreadable->detail, "; body of 20 bytes above max_body_size 10"),
                  c.unreadable->detail);
    CHECK(*c.unreadable->raw_properties == hex("00 02"));
    CHECK(c.unreadable->body_dropped);
    CHECK(c.body.empty());
}

TEST_CASE("framing faults stay errors: header fields, and more body bytes than announced while dropping") {
    SUBCASE("class") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        frame f = header_with_block(1, 0, hex("00 00"));
        f.payload[1] = 61;
        CHECK(a.on_frame(view(f)) == errc::bad_content_header);
    }
    SUBCASE("fields cut short") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        CHECK(a.on_frame({frame_type::header, 1, hex("00 3c 00 00 00 00")}) == errc::truncated);
    }
    SUBCASE("more body than announced, while a body over the limit is dropped") {
        content_assembler a(1, 4);
        REQUIRE_FALSE(a.expect_content());
        REQUIRE_FALSE(a.on_frame(view(header_with_block(1, 5, hex("00 00")))));
        REQUIRE_FALSE(a.on_frame(view(body_frame(1, bytes(3)))));
        CHECK(a.on_frame(view(body_frame(1, bytes(3)))) == errc::body_too_large);
        CHECK_MESSAGE(contains(a.detail(), "2 left"), a.detail());
        CHECK_FALSE(a.ready());
    }
    SUBCASE("a method frame in the middle of an unreadable content") {
        content_assembler a(1);
        REQUIRE_FALSE(a.expect_content());
        REQUIRE_FALSE(a.on_frame(view(header_with_block(1, 5, hex("00 02")))));
        CHECK(a.on_frame({frame_type::method, 1, hex("00 3c 00 3c")}) == errc::unexpected_frame);
    }
}

}  // TEST_SUITE
