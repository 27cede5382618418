// The incremental frame parser: any chunking gives the same frames; every
// error is detected, sticky and explained.
#include "bytes.hpp"

#include "tarry/amqp/wire/frame.hpp"
#include "tarry/amqp/wire/frame_parser.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace tarry::amqp::wire;
using wire_test::bytes;
using wire_test::contains;
using wire_test::hex;

namespace {

// A stream of many frames of every type and assorted sizes and channels,
// over 64 KiB in total so the parser's buffer must both compact and grow.
bytes sample_stream(std::vector<frame>& frames) {
    std::mt19937 rng(7);
    bytes out;
    for (int i = 0; i < 300; ++i) {
        frame f;
        switch (i % 5) {
        case 0: f.type = frame_type::method; break;
        case 1: f.type = frame_type::header; break;
        case 2:
        case 3: f.type = frame_type::body; break;
        case 4: f.type = frame_type::heartbeat; break;
        }
        if (f.type != frame_type::heartbeat) {
            f.channel = static_cast<std::uint16_t>(rng() % 3 == 0 ? 65535 : rng() % 8);
            const std::size_t n = i % 17 == 0 ? 4088 : rng() % 700;
            f.payload.resize(n);
            for (auto& b : f.payload) b = static_cast<std::uint8_t>(rng());
        }
        REQUIRE_FALSE(encode_frame(out, f));
        frames.push_back(std::move(f));
    }
    return out;
}

// Feeds `stream` in the chunk sizes `next_chunk` picks, taking frames out
// after every feed.
template <class Chunker>
std::vector<frame> parse_chunked(const bytes& stream, Chunker next_chunk,
                                 std::uint32_t frame_max = min_frame_max) {
    frame_parser p(frame_max);
    std::vector<frame> out;
    std::size_t at = 0;
    while (at < stream.size()) {
        const std::size_t n = std::min(next_chunk(), stream.size() - at);
        p.feed(std::span(stream).subspan(at, n));
        at += n;
        while (auto f = p.next()) out.push_back(f->to_frame());
        REQUIRE_MESSAGE(!p.error(), p.detail());
    }
    CHECK(p.buffered() == 0);
    CHECK(p.consumed() == stream.size());
    return out;
}

struct parse_result {
    std::vector<frame> frames;
    std::error_code error;
    std::string detail;
};

parse_result parse(const bytes& stream, std::uint32_t frame_max = min_frame_max) {
    frame_parser p(frame_max);
    p.feed(stream);
    parse_result r;
    while (auto f = p.next()) r.frames.push_back(f->to_frame());
    r.error = p.error();
    r.detail = p.detail();
    return r;
}

}  // namespace

TEST_SUITE("wire.frame_parser") {

TEST_CASE("all at once, one byte at a time and random chunks give the same frames") {
    std::vector<frame> expected;
    const bytes stream = sample_stream(expected);
    REQUIRE(stream.size() > 64 * 1024);

    CHECK(parse_chunked(stream, [&] { return stream.size(); }) == expected);
    CHECK(parse_chunked(stream, [] { return std::size_t{1}; }) == expected);
    CHECK(parse_chunked(stream, [] { return std::size_t{7}; }) == expected);
    CHECK(parse_chunked(stream, [] { return std::size_t{4096}; }) == expected);
    for (unsigned seed = 1; seed <= 20; ++seed) {
        CAPTURE(seed);
        std::mt19937 rng(seed);
        CHECK(parse_chunked(stream, [&] { return std::size_t{1} + rng() % 9000; }) == expected);
    }
}

TEST_CASE("prepare / commit read straight into the parser's buffer") {
    std::vector<frame> expected;
    const bytes stream = sample_stream(expected);
    frame_parser p;
    std::vector<frame> got;
    std::mt19937 rng(3);
    std::size_t at = 0;
    while (at < stream.size()) {
        const std::size_t want = 1 + rng() % 5000;
        auto space = p.prepare(want);
        REQUIRE(space.size() >= want);
        const std::size_t n = std::min({want, space.size(), stream.size() - at});
        std::copy_n(stream.begin() + static_cast<std::ptrdiff_t>(at), n, space.begin());
        p.commit(n);
        at += n;
        while (auto f = p.next()) got.push_back(f->to_frame());
        REQUIRE_FALSE(p.error());
    }
    CHECK(got == expected);
}

TEST_CASE("a feed() between prepare() and commit() voids the commit") {
    bytes hb;
    encode_heartbeat(hb);
    frame_parser p;
    auto space = p.prepare(16);
    std::copy(hb.begin(), hb.end(), space.begin());
    p.feed(hb);
    p.commit(hb.size());
    CHECK(p.buffered() == hb.size());
    CHECK(p.next().has_value());
    CHECK_FALSE(p.next().has_value());
    CHECK_FALSE(p.error());
}

TEST_CASE("views stay valid across next() until the next feed") {
    bytes stream;
    REQUIRE_FALSE(encode_frame(stream, frame_type::method, 1, hex("00 0a 00 0b")));
    REQUIRE_FALSE(encode_frame(stream, frame_type::body, 2, wire_test::of("hello")));
    encode_heartbeat(stream);
    frame_parser p;
    p.feed(stream);
    std::vector<frame_view> views;
    while (auto f = p.next()) views.push_back(*f);
    REQUIRE(views.size() == 3);
    CHECK(views[0].type == frame_type::method);
    CHECK(views[0].channel == 1);
    CHECK(bytes(views[0].payload.begin(), views[0].payload.end()) == hex("00 0a 00 0b"));
    CHECK(views[1].type == frame_type::body);
    CHECK(views[1].channel == 2);
    CHECK(bytes(views[1].payload.begin(), views[1].payload.end()) == wire_test::of("hello"));
    CHECK(views[2].type == frame_type::heartbeat);
    CHECK(views[2].payload.empty());
}

TEST_CASE("a partial frame yields nothing, then the frame") {
    bytes stream;
    REQUIRE_FALSE(encode_frame(stream, frame_type::method, 3, hex("01 02 03")));
    frame_parser p;
    for (std::size_t i = 0; i + 1 < stream.size(); ++i) {
        p.feed(std::span(stream).subspan(i, 1));
        CHECK_FALSE(p.next().has_value());
        CHECK_FALSE(p.error());
        CHECK(p.buffered() == i + 1);
    }
    p.feed(std::span(stream).subspan(stream.size() - 1));
    auto f = p.next();
    REQUIRE(f.has_value());
    CHECK(f->channel == 3);
    CHECK_FALSE(p.next().has_value());
}

TEST_CASE("frame_max: 4096 until tune, then what was negotiated") {
    bytes ok;
    REQUIRE_FALSE(encode_frame(ok, frame_type::body, 1, bytes(4088)));
    CHECK(parse(ok).frames.size() == 1);

    bytes big;
    REQUIRE_FALSE(encode_frame(big, frame_type::body, 1, bytes(4089)));
    const auto r = parse(big);
    CHECK(r.error == errc::frame_too_large);
    CHECK_MESSAGE(contains(r.detail, "4097"), r.detail);
    CHECK_MESSAGE(contains(r.detail, "frame_max 4096"), r.detail);
    CHECK_MESSAGE(contains(r.detail, "body frame on channel 1"), r.detail);

    // Detected from the 7-byte frame header alone, before the payload arrives.
    frame_parser early;
    early.feed(std::span(big).first(7));
    CHECK_FALSE(early.next().has_value());
    CHECK(early.error() == errc::frame_too_large);

    frame_parser tuned;
    CHECK(tuned.frame_max() == min_frame_max);
    tuned.set_frame_max(131072);
    tuned.feed(big);
    CHECK(tuned.next().has_value());

    CHECK(parse(big, 0).frames.size() == 1);  // 0: no limit
    bytes huge;
    REQUIRE_FALSE(encode_frame(huge, frame_type::body, 1, bytes(300000)));
    CHECK(parse(huge, 0).frames.size() == 1);
    CHECK(parse(huge, 131072).error == errc::frame_too_large);
}

TEST_CASE("a size field near 4 GiB is refused before anything is buffered for it") {
    const auto r = parse(hex("03 00 01 ff ff ff ff"));
    CHECK(r.error == errc::frame_too_large);
    CHECK_MESSAGE(contains(r.detail, "4294967295"), r.detail);
}

TEST_CASE("bad frame end") {
    bytes stream;
    REQUIRE_FALSE(encode_frame(stream, frame_type::method, 1, hex("00 0a 00 0b")));
    stream.back() = 0xcd;
    const auto r = parse(stream);
    CHECK(r.frames.empty());
    CHECK(r.error == errc::bad_frame_end);
    CHECK_MESSAGE(contains(r.detail, "0xcd"), r.detail);
    CHECK_MESSAGE(contains(r.detail, "method frame on channel 1"), r.detail);
}

TEST_CASE("unknown frame type, including the 4 of an old spec PDF") {
    for (std::uint8_t t : {0, 4, 9, 0xce, 0xff}) {
        CAPTURE(int(t));
        const auto r = parse(bytes{t, 0, 0, 0, 0, 0, 0, 0xce});
        CHECK(r.error == errc::unknown_frame_type);
        CHECK_MESSAGE(contains(r.detail, "frame type " + std::to_string(t)), r.detail);
    }
    // Detected from the first byte, and the offset is reported.
    bytes stream;
    encode_heartbeat(stream);
    stream.push_back(4);
    const auto r = parse(stream);
    CHECK(r.frames.size() == 1);
    CHECK(r.error == errc::unknown_frame_type);
    CHECK_MESSAGE(contains(r.detail, "offset 8"), r.detail);
}

TEST_CASE("heartbeat must be on channel 0 with no payload") {
    CHECK(parse(hex("08 00 00 00 00 00 00 ce")).frames.size() == 1);
    const auto on_channel = parse(hex("08 00 01 00 00 00 00 ce"));
    CHECK(on_channel.error == errc::bad_heartbeat);
    CHECK_MESSAGE(contains(on_channel.detail, "channel 1"), on_channel.detail);
    const auto with_payload = parse(hex("08 00 00 00 00 00 01 00 ce"));
    CHECK(with_payload.error == errc::bad_heartbeat);
    CHECK_MESSAGE(contains(with_payload.detail, "1 bytes"), with_payload.detail);
}

TEST_CASE("errors are sticky until reset") {
    frame_parser p;
    p.feed(hex("08 00 01 00 00 00 00 ce"));
    CHECK_FALSE(p.next().has_value());
    REQUIRE(p.error() == errc::bad_heartbeat);
    const std::string first = p.detail();

    p.feed(hex("08 00 00 00 00 00 00 ce"));
    CHECK_FALSE(p.next().has_value());
    CHECK(p.error() == errc::bad_heartbeat);
    CHECK(p.detail() == first);

    p.reset();
    CHECK_FALSE(p.error());
    CHECK(p.detail().empty());
    CHECK(p.buffered() == 0);
    p.feed(hex("08 00 00 00 00 00 00 ce"));
    CHECK(p.next().has_value());
}

TEST_CASE("a protocol header sent back instead of a frame") {
    SUBCASE("all at once") {
        const auto r = parse(hex("41 4d 51 50 00 00 09 01"));
        CHECK(r.error == errc::bad_protocol_header);
        CHECK_MESSAGE(contains(r.detail, "AMQP 0-0-9-1"), r.detail);
    }
    SUBCASE("one byte at a time: no verdict before all eight") {
        const bytes h = hex("41 4d 51 50 01 01 00 0a");
        frame_parser p;
        for (std::size_t i = 0; i < h.size(); ++i) {
            p.feed(std::span(h).subspan(i, 1));
            CHECK_FALSE(p.next().has_value());
            if (i + 1 < h.size()) CHECK_FALSE(p.error());
        }
        CHECK(p.error() == errc::bad_protocol_header);
        CHECK_MESSAGE(contains(p.detail(), "AMQP 1-1-0-10"), p.detail());
    }
    SUBCASE("'A' that is not a header is an unknown frame type") {
        CHECK(parse(hex("41 42 00 00 00 00 00 ce")).error == errc::unknown_frame_type);
    }
    SUBCASE("only at the start of the stream") {
        bytes stream;
        encode_heartbeat(stream);
        stream.insert(stream.end(), protocol_header.begin(), protocol_header.end());
        const auto r = parse(stream);
        CHECK(r.frames.size() == 1);
        CHECK(r.error == errc::unknown_frame_type);
    }
}

}  // TEST_SUITE
