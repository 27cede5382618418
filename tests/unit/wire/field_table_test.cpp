// Field tables and arrays: API, golden bytes, round trips, every error path.
#include "bytes.hpp"

#include "tarry/amqp/wire/field_table.hpp"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

using namespace tarry::amqp::wire;
using wire_test::bytes;
using wire_test::hex;
using wire_test::contains;
using wire_test::to_hex;

namespace {

bytes table_bytes(const field_table& t) {
    return wire_test::encoded([&](byte_writer& w) { encode_table(w, t); });
}

bytes value_bytes(const field_value& v) {
    return wire_test::encoded([&](byte_writer& w) { encode_field_value(w, v); });
}

struct decoded_table {
    field_table table;
    std::error_code error;
    std::string detail;
    bool at_end = false;
};

decoded_table decode(const bytes& b, const table_limits& limits = {}) {
    byte_reader r(b);
    decoded_table d;
    d.table = decode_table(r, limits);
    d.error = r.error();
    d.detail = r.detail();
    d.at_end = r.at_end();
    return d;
}

field_table round_trip(const field_table& t) {
    const bytes b = table_bytes(t);
    REQUIRE_FALSE(b.empty());
    const auto d = decode(b);
    REQUIRE_MESSAGE(!d.error, d.detail);
    CHECK(d.at_end);
    return d.table;
}

// A table holding one of every value type, nested tables and arrays included.
field_table every_type() {
    field_table inner{{"deep", field_array{std::int64_t{-1}, field_table{{"x", "y"}}}}};
    return field_table{
        {"void", void_value{}},
        {"true", true},
        {"false", false},
        {"i8", std::int8_t{-128}},
        {"u8", std::uint8_t{255}},
        {"i16", std::int16_t{-32768}},
        {"u16", std::uint16_t{65535}},
        {"i32", std::numeric_limits<std::int32_t>::min()},
        {"u32", std::numeric_limits<std::uint32_t>::max()},
        {"i64", std::numeric_limits<std::int64_t>::min()},
        {"i64max", std::numeric_limits<std::int64_t>::max()},
        {"f", 1.5f},
        {"d", -2.25},
        {"dec", decimal_value{2, 12345}},
        {"str", std::string("h\0llo", 5)},
        {"empty", ""},
        {"ts", timestamp_value{1700000000}},
        {"arr", field_array{std::int32_t{1}, "two", field_array{}, field_table{}}},
        {"tbl", inner},
        {"bin", byte_array{{0x00, 0xff, 0xce}}},
    };
}

}  // namespace

TEST_SUITE("wire.field_table") {

TEST_CASE("find, set and erase keep order and duplicates") {
    field_table t{{"a", std::int32_t{1}}, {"b", "x"}, {"a", std::int32_t{2}}};
    REQUIRE(t.size() == 3);
    REQUIRE(t.find("a") != nullptr);
    CHECK(*t.find("a") == field_value(std::int32_t{1}));  // the first one
    CHECK(t.find("zz") == nullptr);

    t.set("b", std::int64_t{7});
    CHECK(t.size() == 3);
    CHECK(t.entries()[1].value == field_value(std::int64_t{7}));
    t.set("c", true);
    CHECK(t.entries().back().name == "c");

    CHECK(t.erase("a") == 2);
    CHECK(t.erase("a") == 0);
    CHECK(t.size() == 2);
    CHECK_FALSE(t.empty());

    const field_table& ct = t;
    REQUIRE(ct.find("c") != nullptr);
    CHECK(ct.find("c")->get_if<bool>() != nullptr);
    if (field_value* v = t.find("c")) *v = false;
    CHECK(*ct.find("c") == field_value(false));
}

TEST_CASE("equality compares names, values and order") {
    field_table a{{"x", std::int32_t{1}}, {"y", "s"}};
    field_table b{{"x", std::int32_t{1}}, {"y", "s"}};
    field_table c{{"y", "s"}, {"x", std::int32_t{1}}};
    CHECK(a == b);
    CHECK_FALSE(a == c);
    // Same number, other type: not equal.
    CHECK_FALSE(field_value(std::int32_t{1}) == field_value(std::int64_t{1}));
    CHECK(field_value(field_table{{"n", a}}) == field_value(field_table{{"n", b}}));
}

TEST_CASE("a C string is a longstr, not a bool") {
    field_value v = "text";
    CHECK(field_tag(v) == 'S');
    REQUIRE(v.get_if<std::string>() != nullptr);
    CHECK(*v.get_if<std::string>() == "text");
}

TEST_CASE("field_tag names RabbitMQ's tag for each alternative") {
    CHECK(field_tag(void_value{}) == 'V');
    CHECK(field_tag(true) == 't');
    CHECK(field_tag(std::int8_t{}) == 'b');
    CHECK(field_tag(std::uint8_t{}) == 'B');
    CHECK(field_tag(std::int16_t{}) == 's');
    CHECK(field_tag(std::uint16_t{}) == 'u');
    CHECK(field_tag(std::int32_t{}) == 'I');
    CHECK(field_tag(std::uint32_t{}) == 'i');
    CHECK(field_tag(std::int64_t{}) == 'l');
    CHECK(field_tag(0.0f) == 'f');
    CHECK(field_tag(0.0) == 'd');
    CHECK(field_tag(decimal_value{}) == 'D');
    CHECK(field_tag(std::string()) == 'S');
    CHECK(field_tag(timestamp_value{}) == 'T');
    CHECK(field_tag(field_array{}) == 'A');
    CHECK(field_tag(field_table{}) == 'F');
    CHECK(field_tag(byte_array{}) == 'x');
}

TEST_CASE("integer_of reads every integer type at its extremes, and nothing else") {
    CHECK(integer_of(std::int8_t{-128}) == -128);
    CHECK(integer_of(std::uint8_t{255}) == 255);
    CHECK(integer_of(std::int16_t{-32768}) == -32768);
    CHECK(integer_of(std::uint16_t{65535}) == 65535);
    CHECK(integer_of(std::numeric_limits<std::int32_t>::min()) == std::numeric_limits<std::int32_t>::min());
    CHECK(integer_of(std::numeric_limits<std::uint32_t>::max()) == std::numeric_limits<std::uint32_t>::max());
    CHECK(integer_of(std::numeric_limits<std::int64_t>::min()) == std::numeric_limits<std::int64_t>::min());
    CHECK(integer_of(std::numeric_limits<std::int64_t>::max()) == std::numeric_limits<std::int64_t>::max());
    CHECK_FALSE(integer_of(true).has_value());
    CHECK_FALSE(integer_of(void_value{}).has_value());
    CHECK_FALSE(integer_of(2.0).has_value());
    CHECK_FALSE(integer_of(2.0f).has_value());
    CHECK_FALSE(integer_of(decimal_value{0, 2}).has_value());
    CHECK_FALSE(integer_of("2").has_value());
    CHECK_FALSE(integer_of(timestamp_value{2}).has_value());
    CHECK_FALSE(integer_of(field_array{field_value(std::int32_t{2})}).has_value());
    CHECK_FALSE(integer_of(field_table{}).has_value());
    CHECK_FALSE(integer_of(byte_array{}).has_value());
}

TEST_CASE("golden bytes") {
    SUBCASE("table {a: int32 1}") {
        // The length counts the 7 bytes after it: 01 61 | 49 | 00 00 00 01.
        CHECK(to_hex(table_bytes({{"a", std::int32_t{1}}})) == "00 00 00 07 01 61 49 00 00 00 01");
    }
    SUBCASE("empty table and array") {
        CHECK(to_hex(table_bytes({})) == "00 00 00 00");
        CHECK(to_hex(wire_test::encoded([](byte_writer& w) { encode_array(w, {}); })) ==
              "00 00 00 00");
    }
    SUBCASE("each value") {
        CHECK(to_hex(value_bytes(void_value{})) == "56");
        CHECK(to_hex(value_bytes(true)) == "74 01");
        CHECK(to_hex(value_bytes(false)) == "74 00");
        CHECK(to_hex(value_bytes(std::int8_t{-2})) == "62 fe");
        CHECK(to_hex(value_bytes(std::uint8_t{0xab})) == "42 ab");
        CHECK(to_hex(value_bytes(std::int16_t{-2})) == "73 ff fe");
        CHECK(to_hex(value_bytes(std::uint16_t{0x1234})) == "75 12 34");
        CHECK(to_hex(value_bytes(std::int32_t{-1})) == "49 ff ff ff ff");
        CHECK(to_hex(value_bytes(std::uint32_t{0x01020304})) == "69 01 02 03 04");
        CHECK(to_hex(value_bytes(std::int64_t{-3})) == "6c ff ff ff ff ff ff ff fd");
        CHECK(to_hex(value_bytes(1.0f)) == "66 3f 80 00 00");
        CHECK(to_hex(value_bytes(-2.0)) == "64 c0 00 00 00 00 00 00 00");
        CHECK(to_hex(value_bytes(decimal_value{2, 12345})) == "44 02 00 00 30 39");
        CHECK(to_hex(value_bytes("hi")) == "53 00 00 00 02 68 69");
        CHECK(to_hex(value_bytes(timestamp_value{0x0102030405060708})) ==
              "54 01 02 03 04 05 06 07 08");
        CHECK(to_hex(value_bytes(byte_array{{1, 2}})) == "78 00 00 00 02 01 02");
    }
    SUBCASE("array: u32 byte length, then tagged values") {
        CHECK(to_hex(value_bytes(field_array{std::int8_t{1}, "a"})) ==
              "41 00 00 00 08 62 01 53 00 00 00 01 61");
    }
    SUBCASE("nested table") {
        CHECK(to_hex(table_bytes({{"t", field_table{{"b", true}}}})) ==
              "00 00 00 0b 01 74 46 00 00 00 04 01 62 74 01");
    }
}

TEST_CASE("every type round-trips, nested tables and arrays included") {
    const field_table t = every_type();
    CHECK(round_trip(t) == t);
}

TEST_CASE("extreme integers round-trip exactly") {
    field_table t{
        {"a", std::numeric_limits<std::int8_t>::max()},
        {"b", std::numeric_limits<std::uint8_t>::min()},
        {"c", std::numeric_limits<std::int16_t>::max()},
        {"d", std::numeric_limits<std::uint16_t>::min()},
        {"e", std::numeric_limits<std::int32_t>::max()},
        {"f", std::uint32_t{0}},
        {"g", std::int64_t{-1}},
        {"h", timestamp_value{std::numeric_limits<std::uint64_t>::max()}},
        {"i", decimal_value{255, std::numeric_limits<std::uint32_t>::max()}},
    };
    CHECK(round_trip(t) == t);
}

TEST_CASE("NaN, infinities and negative zero decode safely, bit for bit") {
    const double dvals[] = {std::numeric_limits<double>::quiet_NaN(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(), -0.0,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::max()};
    for (double v : dvals) {
        const auto got = round_trip({{"d", v}});
        REQUIRE(got.find("d") != nullptr);
        const double* d = got.find("d")->get_if<double>();
        REQUIRE(d != nullptr);
        CHECK(std::bit_cast<std::uint64_t>(*d) == std::bit_cast<std::uint64_t>(v));
    }
    const float fvals[] = {std::numeric_limits<float>::quiet_NaN(),
                           std::numeric_limits<float>::infinity(), -0.0f,
                           std::numeric_limits<float>::lowest()};
    for (float v : fvals) {
        const auto got = round_trip({{"f", v}});
        const float* f = got.find("f")->get_if<float>();
        REQUIRE(f != nullptr);
        CHECK(std::bit_cast<std::uint32_t>(*f) == std::bit_cast<std::uint32_t>(v));
    }
    // A signalling NaN bit pattern from the wire is kept as is.
    const auto d = decode(hex("00 00 00 0b 01 6e 64 7f f0 00 00 00 00 00 01"));
    REQUIRE_FALSE(d.error);
    CHECK(std::isnan(*d.table.find("n")->get_if<double>()));
}

TEST_CASE("'L' is read as int64 and written back as 'l'") {
    const auto d = decode(hex("00 00 00 0b 01 6e 4c ff ff ff ff ff ff ff fe"));
    REQUIRE_FALSE(d.error);
    CHECK(d.table == field_table{{"n", std::int64_t{-2}}});
    CHECK(to_hex(table_bytes(d.table)) == "00 00 00 0b 01 6e 6c ff ff ff ff ff ff ff fe");
}

TEST_CASE("'s' is a signed 16-bit integer, as RabbitMQ reads it") {
    const auto d = decode(hex("00 00 00 05 01 6e 73 80 00"));
    REQUIRE_FALSE(d.error);
    CHECK(d.table == field_table{{"n", std::int16_t{-32768}}});
}

TEST_CASE("duplicate names and empty names survive a round trip") {
    field_table t{{"", std::int32_t{1}}, {"k", "a"}, {"k", "b"}};
    CHECK(round_trip(t) == t);
}

TEST_CASE("a table as a decoder reads it: consumes exactly its length") {
    bytes b = table_bytes({{"a", std::int32_t{1}}});
    b.push_back(0x99);
    byte_reader r(b);
    const auto t = decode_table(r);
    CHECK(r.ok());
    CHECK(r.remaining() == 1);
    CHECK(t.size() == 1);
}

TEST_CASE("decode_array reads a bare array") {
    const field_array a{std::int32_t{1}, field_table{{"x", void_value{}}}, field_array{true}};
    const bytes b = wire_test::encoded([&](byte_writer& w) { encode_array(w, a); });
    byte_reader r(b);
    CHECK(decode_array(r) == a);
    CHECK(r.ok());
    CHECK(r.at_end());
}

TEST_CASE("truncation at every byte offset fails with truncated") {
    const bytes full = table_bytes(every_type());
    REQUIRE(full.size() > 100);
    for (std::size_t n = 0; n < full.size(); ++n) {
        CAPTURE(n);
        const bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        const auto d = decode(cut);
        CHECK(d.error == errc::truncated);
        CHECK_FALSE(d.detail.empty());
    }
}

TEST_CASE("a table whose own length cuts a value short fails inside the table") {
    // The outer length is patched to every shorter body: each cut either
    // falls between entries (a valid, shorter table) or inside one (truncated,
    // and the detail names where).
    const field_table t = every_type();
    const bytes full = table_bytes(t);
    std::size_t ok_cuts = 0;
    for (std::size_t body = 0; body < full.size() - 4; ++body) {
        CAPTURE(body);
        bytes cut(full.begin(), full.begin() + 4 + static_cast<std::ptrdiff_t>(body));
        cut[0] = static_cast<std::uint8_t>(body >> 24);
        cut[1] = static_cast<std::uint8_t>(body >> 16);
        cut[2] = static_cast<std::uint8_t>(body >> 8);
        cut[3] = static_cast<std::uint8_t>(body);
        const auto d = decode(cut);
        if (!d.error) {
            ++ok_cuts;
            REQUIRE(d.table.size() < t.size());
            for (std::size_t i = 0; i < d.table.size(); ++i)
                CHECK(d.table.entries()[i] == t.entries()[i]);
        } else {
            CHECK(d.error == errc::truncated);
            CHECK_MESSAGE((contains(d.detail, "field '") || contains(d.detail, "name of entry ")), d.detail);
        }
    }
    CHECK(ok_cuts == t.size());  // one per entry boundary, the empty table included
}

TEST_CASE("an unknown tag fails with bad_field_type naming the tag and the field") {
    SUBCASE("top level") {
        const auto d = decode(hex("00 00 00 07 03 6b 65 79 5a 00 00"));
        CHECK(d.error == errc::bad_field_type);
        CHECK_MESSAGE(contains(d.detail, "'Z'"), d.detail);
        CHECK_MESSAGE(contains(d.detail, "'key'"), d.detail);
    }
    SUBCASE("the spec's 'U' and a non-printable tag") {
        CHECK(decode(hex("00 00 00 04 01 6b 55 00")).error == errc::bad_field_type);
        const auto d = decode(hex("00 00 00 03 01 6b 00"));
        CHECK(d.error == errc::bad_field_type);
        CHECK_MESSAGE(contains(d.detail, "0x00"), d.detail);
    }
    SUBCASE("nested: the detail gives the path") {
        // {"o": {"i": 'Z'}}
        const auto d = decode(hex("00 00 00 0a 01 6f 46 00 00 00 03 01 69 5a"));
        CHECK(d.error == errc::bad_field_type);
        CHECK_MESSAGE(contains(d.detail, "'o'"), d.detail);
        CHECK_MESSAGE(contains(d.detail, "'i'"), d.detail);
        CHECK_MESSAGE(contains(d.detail, "'Z'"), d.detail);
    }
    SUBCASE("inside an array") {
        // {"a": [int8 1, 'Z']}
        const auto d = decode(hex("00 00 00 0a 01 61 41 00 00 00 03 62 01 5a"));
        CHECK(d.error == errc::bad_field_type);
        CHECK_MESSAGE(contains(d.detail, "'a'"), d.detail);
        CHECK_MESSAGE(contains(d.detail, "element 1"), d.detail);
    }
}

TEST_CASE("nesting deeper than max_depth fails with table_too_deep") {
    auto nested = [](std::size_t depth, bool arrays) {
        field_value v = std::int32_t{1};
        for (std::size_t i = 1; i < depth; ++i) {
            if (arrays) v = field_array{std::move(v)};
            else v = field_table{{"n", std::move(v)}};
        }
        return field_table{{"n", std::move(v)}};
    };
    for (bool arrays : {false, true}) {
        CAPTURE(arrays);
        const table_limits limits;  // max_depth 32
        CHECK_FALSE(decode(table_bytes(nested(limits.max_depth, arrays))).error);
        const auto d = decode(table_bytes(nested(limits.max_depth + 1, arrays)));
        CHECK(d.error == errc::table_too_deep);
        CHECK_MESSAGE(contains(d.detail, "32"), d.detail);
    }
    table_limits two;
    two.max_depth = 2;
    CHECK_FALSE(decode(table_bytes({{"a", field_table{}}}), two).error);
    CHECK(decode(table_bytes({{"a", field_table{{"b", field_array{}}}}}), two).error ==
          errc::table_too_deep);

    // Far deeper than any limit, and never a stack overflow: 100000 levels.
    bytes deep;
    const std::size_t levels = 100000;
    for (std::size_t i = 0; i < levels; ++i) {
        const std::size_t len = i + 1 < levels ? (levels - i - 1) * 7 : 0;
        const std::uint8_t head[] = {static_cast<std::uint8_t>(len >> 24),
                                     static_cast<std::uint8_t>(len >> 16),
                                     static_cast<std::uint8_t>(len >> 8),
                                     static_cast<std::uint8_t>(len), 1, 'n', 'F'};
        deep.insert(deep.end(), head, head + (i + 1 < levels ? 7 : 4));
    }
    CHECK(decode(deep).error == errc::table_too_deep);
}

TEST_CASE("a table or array above max_bytes fails with table_too_large") {
    table_limits small;
    small.max_bytes = 9;
    // Body: 01 61 49 00 00 00 01 | 00 56 = 9 bytes, at the limit.
    CHECK_FALSE(decode(table_bytes({{"a", std::int32_t{1}}, {"", void_value{}}}), small).error);
    const auto d = decode(table_bytes({{"a", std::int64_t{1}}}), small);  // 11 bytes
    CHECK(d.error == errc::table_too_large);
    CHECK_MESSAGE(contains(d.detail, "11 bytes"), d.detail);

    const bytes arr = wire_test::encoded(
        [](byte_writer& w) { encode_array(w, {std::int64_t{1}, std::int8_t{2}}); });  // 11 bytes
    byte_reader r(arr);
    (void)decode_array(r, small);
    CHECK(r.error() == errc::table_too_large);
}

TEST_CASE("a huge length field allocates nothing: too large, or truncated") {
    CHECK(decode(hex("ff ff ff ff 01 61")).error == errc::table_too_large);
    table_limits unlimited;
    unlimited.max_bytes = std::numeric_limits<std::uint32_t>::max();
    CHECK(decode(hex("ff ff ff ff 01 61"), unlimited).error == errc::truncated);
    // Long string, array and byte array claiming 4 GiB inside a small table.
    CHECK(decode(hex("00 00 00 08 01 61 53 ff ff ff ff 00"), unlimited).error == errc::truncated);
    CHECK(decode(hex("00 00 00 08 01 61 78 ff ff ff ff 00"), unlimited).error == errc::truncated);
    CHECK(decode(hex("00 00 00 08 01 61 41 ff ff ff ff 00"), unlimited).error == errc::truncated);
    // A name longer than what is left.
    CHECK(decode(hex("00 00 00 02 ff 61")).error == errc::truncated);
}

TEST_CASE("encoding fails on a name over 255 bytes") {
    bytes out;
    byte_writer w(out);
    encode_table(w, {{std::string(256, 'n'), true}});
    CHECK(w.error() == errc::string_too_long);
    CHECK_MESSAGE(contains(w.detail(), "256"), w.detail());

    bytes ok;
    byte_writer w2(ok);
    encode_table(w2, {{std::string(255, 'n'), true}});
    CHECK(w2.ok());
}

TEST_CASE("random bytes never crash the decoder and always consume within bounds") {
    std::mt19937 rng(12345);
    const bytes seed = table_bytes(every_type());
    for (int iter = 0; iter < 20000; ++iter) {
        bytes b;
        if (iter % 2 == 0) {
            // Mutate a valid encoding in a few places.
            b = seed;
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int i = 0; i < flips; ++i) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
        } else {
            b.resize(rng() % 64);
            for (auto& c : b) c = static_cast<std::uint8_t>(rng());
        }
        byte_reader r(b);
        (void)decode_table(r);
        CHECK(r.position() <= b.size());
        if (!r.ok()) CHECK_FALSE(r.detail().empty());
    }
}

}  // TEST_SUITE
