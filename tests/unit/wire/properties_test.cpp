// basic.properties and content-header payloads.
#include "bytes.hpp"

#include "tarry/amqp/wire/properties.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <limits>

using namespace tarry::amqp::wire;
using wire_test::bytes;
using wire_test::contains;
using wire_test::hex;
using wire_test::to_hex;

namespace {

bytes header_bytes(const content_header& h) {
    return wire_test::encoded([&](byte_writer& w) { encode_content_header(w, h); });
}

struct decoded_header {
    content_header header;
    std::error_code error;
    std::string detail;
};

decoded_header decode(const bytes& b) {
    byte_reader r(b);
    decoded_header d;
    d.header = decode_content_header(r);
    d.error = r.error();
    d.detail = r.detail();
    return d;
}

basic_properties all_fourteen() {
    basic_properties p;
    p.content_type = "application/json";
    p.content_encoding = "gzip";
    p.headers = field_table{{"perform_job_at", 1700000000.5},
                            {"x-death", field_array{field_table{{"count", std::int64_t{2}}}}}};
    p.delivery_mode = 2;
    p.priority = 9;
    p.correlation_id = "corr";
    p.reply_to = "amq.rabbitmq.reply-to";
    p.expiration = "60000";
    p.message_id = "m-1";
    p.timestamp = std::numeric_limits<std::uint64_t>::max();
    p.type = "job";
    p.user_id = "guest";
    p.app_id = "tarry";
    p.cluster_id = std::string(255, 'c');
    return p;
}

// One setter per property, with the flag it must raise.
struct one_property {
    const char* name;
    std::uint16_t flag;
    std::function<void(basic_properties&)> set;
};

const one_property each_property[] = {
    {"content_type", property_flag::content_type, [](auto& p) { p.content_type = "text/plain"; }},
    {"content_encoding", property_flag::content_encoding,
     [](auto& p) { p.content_encoding = "utf-8"; }},
    {"headers", property_flag::headers, [](auto& p) { p.headers = field_table{{"k", "v"}}; }},
    {"delivery_mode", property_flag::delivery_mode, [](auto& p) { p.delivery_mode = 2; }},
    {"priority", property_flag::priority, [](auto& p) { p.priority = 255; }},
    {"correlation_id", property_flag::correlation_id, [](auto& p) { p.correlation_id = "c"; }},
    {"reply_to", property_flag::reply_to, [](auto& p) { p.reply_to = "q"; }},
    {"expiration", property_flag::expiration, [](auto& p) { p.expiration = "1000"; }},
    {"message_id", property_flag::message_id, [](auto& p) { p.message_id = "id"; }},
    {"timestamp", property_flag::timestamp, [](auto& p) { p.timestamp = 1700000000; }},
    {"type", property_flag::type, [](auto& p) { p.type = "t"; }},
    {"user_id", property_flag::user_id, [](auto& p) { p.user_id = "guest"; }},
    {"app_id", property_flag::app_id, [](auto& p) { p.app_id = "app"; }},
    {"cluster_id", property_flag::cluster_id, [](auto& p) { p.cluster_id = ""; }},
};

}  // namespace

TEST_SUITE("wire.properties") {

TEST_CASE("flag bits run from 0x8000 down in wire order") {
    std::uint16_t expected = 0x8000;
    std::uint16_t all = 0;
    for (const auto& prop : each_property) {
        CAPTURE(prop.name);
        CHECK(prop.flag == expected);
        basic_properties p;
        prop.set(p);
        CHECK(property_flags(p) == prop.flag);
        all = static_cast<std::uint16_t>(all | prop.flag);
        expected = static_cast<std::uint16_t>(expected >> 1);
    }
    CHECK(all == property_flag::all);
    CHECK(property_flags(all_fourteen()) == property_flag::all);
    CHECK(property_flags({}) == 0);
}

TEST_CASE("each property alone round-trips") {
    for (const auto& prop : each_property) {
        CAPTURE(prop.name);
        content_header h;
        h.body_size = 42;
        prop.set(h.properties);
        const bytes b = header_bytes(h);
        REQUIRE_FALSE(b.empty());
        const auto d = decode(b);
        REQUIRE_MESSAGE(!d.error, d.detail);
        CHECK(d.header == h);
    }
}

TEST_CASE("all fourteen properties together round-trip") {
    content_header h;
    h.body_size = std::numeric_limits<std::uint64_t>::max();
    h.properties = all_fourteen();
    const auto d = decode(header_bytes(h));
    REQUIRE_MESSAGE(!d.error, d.detail);
    CHECK(d.header == h);
}

TEST_CASE("golden bytes") {
    SUBCASE("no properties") {
        CHECK(to_hex(header_bytes({})) == "00 3c 00 00 00 00 00 00 00 00 00 00 00 00");
    }
    SUBCASE("content_type and delivery_mode") {
        content_header h;
        h.body_size = 5;
        h.properties.content_type = "a";
        h.properties.delivery_mode = 2;
        CHECK(to_hex(header_bytes(h)) ==
              "00 3c 00 00 00 00 00 00 00 00 00 05 90 00 01 61 02");
    }
    SUBCASE("headers, timestamp and cluster_id") {
        content_header h;
        h.properties.headers = field_table{{"a", std::int32_t{1}}};
        h.properties.timestamp = 0x0102030405060708;
        h.properties.cluster_id = "";
        CHECK(to_hex(header_bytes(h)) == "00 3c 00 00 00 00 00 00 00 00 00 00 20 44"
                                         " 00 00 00 07 01 61 49 00 00 00 01"
                                         " 01 02 03 04 05 06 07 08 00");
    }
}

TEST_CASE("decode_properties reads a bare flags word and properties") {
    const bytes b = hex("08 00 07");  // priority 7
    byte_reader r(b);
    const auto p = decode_properties(r);
    CHECK(r.ok());
    CHECK(r.at_end());
    CHECK(p.priority == std::uint8_t{7});
    CHECK_FALSE(p.delivery_mode.has_value());
}

TEST_CASE("a flags word with the continuation bit or bit 1 is refused") {
    const auto cont = decode(hex("00 3c 00 00 00 00 00 00 00 00 00 00 80 01 01 61"));
    CHECK(cont.error == errc::bad_content_header);
    CHECK_MESSAGE(contains(cont.detail, "continuation"), cont.detail);
    CHECK_MESSAGE(contains(cont.detail, "0x8001"), cont.detail);

    const auto bit1 = decode(hex("00 3c 00 00 00 00 00 00 00 00 00 00 00 02"));
    CHECK(bit1.error == errc::bad_content_header);
    CHECK_MESSAGE(contains(bit1.detail, "0x0002"), bit1.detail);
}

TEST_CASE("class other than basic, or non-zero weight, is refused") {
    const auto cls = decode(hex("00 3d 00 00 00 00 00 00 00 00 00 00 00 00"));
    CHECK(cls.error == errc::bad_content_header);
    CHECK_MESSAGE(contains(cls.detail, "61"), cls.detail);
    const auto weight = decode(hex("00 3c 00 01 00 00 00 00 00 00 00 00 00 00"));
    CHECK(weight.error == errc::bad_content_header);
    CHECK_MESSAGE(contains(weight.detail, "weight"), weight.detail);
}

TEST_CASE("bytes after the last property fail with trailing_bytes") {
    bytes b = hex("00 3c 00 00 00 00 00 00 00 00 00 00 08 00 07");
    CHECK_FALSE(decode(b).error);
    b.push_back(0);
    const auto d = decode(b);
    CHECK(d.error == errc::trailing_bytes);
    CHECK_MESSAGE(contains(d.detail, "1 bytes"), d.detail);
}

TEST_CASE("the fields before the properties and the property block read apart") {
    const bytes b = hex("00 3c 00 00 00 00 00 00 00 00 00 05 08 00 07");
    byte_reader r(b);
    const content_header h = decode_content_header_fields(r);
    REQUIRE(r.ok());
    CHECK(h.body_size == 5);
    CHECK(r.position() == 12);
    CHECK(h.properties == basic_properties{});
    const auto p = decode_property_block(r);
    REQUIRE(r.ok());
    CHECK(p.priority == std::uint8_t{7});

    // The fields alone decide class and weight; the block alone fails on
    // what follows the last property.
    const bytes wrong_class = hex("00 3d 00 00 00 00 00 00 00 00 00 00");
    byte_reader bad_class(wrong_class);
    decode_content_header_fields(bad_class);
    CHECK(bad_class.error() == errc::bad_content_header);
    const bytes trailing = hex("08 00 07 00");
    byte_reader block(trailing);
    decode_property_block(block);
    CHECK(block.error() == errc::trailing_bytes);
}

TEST_CASE("truncation at every byte offset fails with truncated") {
    content_header h;
    h.body_size = 7;
    h.properties = all_fourteen();
    const bytes full = header_bytes(h);
    for (std::size_t n = 0; n < full.size(); ++n) {
        CAPTURE(n);
        const auto d = decode(bytes(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n)));
        CHECK(d.error == errc::truncated);
        CHECK_FALSE(d.detail.empty());
    }
}

TEST_CASE("a bad field in the headers table fails the header") {
    // headers flag, table {"k": 'Z'}
    const auto d = decode(hex("00 3c 00 00 00 00 00 00 00 00 00 00 20 00 00 00 00 03 01 6b 5a"));
    CHECK(d.error == errc::bad_field_type);
    CHECK_MESSAGE(contains(d.detail, "'k'"), d.detail);
}

TEST_CASE("a shortstr property over 255 bytes cannot be encoded") {
    content_header h;
    h.properties.reply_to = std::string(256, 'r');
    bytes out;
    byte_writer w(out);
    encode_content_header(w, h);
    CHECK(w.error() == errc::string_too_long);
    CHECK_MESSAGE(contains(w.detail(), "reply_to"), w.detail());
}

TEST_CASE("an engaged empty string is sent and comes back engaged") {
    content_header h;
    h.properties.type = "";
    const auto d = decode(header_bytes(h));
    REQUIRE_FALSE(d.error);
    REQUIRE(d.header.properties.type.has_value());
    CHECK(d.header.properties.type->empty());
}

}  // TEST_SUITE
