// The dead letters of messages that cannot be read: what they carry (raw
// properties, then the body) and the reason that says how to read them.
#include "message_copies.hpp"

#include <doctest/doctest.h>

#include <string>

namespace amqp = tarry::amqp;
namespace wire = tarry::amqp::wire;
using tarry::detail::unreadable_dead_letter;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string header_text(const amqp::message& m, const char* name) {
    const auto* v = m.properties.headers ? m.properties.headers->find(name) : nullptr;
    const auto* s = v ? v->get_if<std::string>() : nullptr;
    return s ? *s : std::string();
}

}  // namespace

TEST_CASE("properties that did not decode: the letter's body is the raw block, then the body") {
    const std::vector<std::uint8_t> raw{0x20, 0x00, 0x00, 0x00, 0x00, 0x09, 0x01};
    amqp::unreadable_content why;
    why.error = wire::errc::table_too_deep;
    why.detail = "properties do not decode: field 'a': field table nested deeper than 32";
    why.raw_properties = raw;
    why.body_size = 4;
    const amqp::message read{amqp::basic_properties{}, {'j', 'o', 'b', '!'}};

    const auto letter = unreadable_dead_letter(read, why, 1);
    CHECK(letter.reason ==
          "unreadable: properties do not decode: field 'a': field table nested deeper than 32"
          " (the dead letter's body: 7 bytes of raw properties, then the 4-byte body)");
    std::vector<std::uint8_t> body = raw;
    body.insert(body.end(), read.body.begin(), read.body.end());
    CHECK(letter.copy.body == body);
    CHECK(header_text(letter.copy, "x-tarry-reason") == letter.reason);
    CHECK(*letter.copy.properties.headers->find("x-tarry-attempt") == amqp::field_value(std::int64_t{1}));
    CHECK(letter.copy.properties.delivery_mode == std::uint8_t{2});
    CHECK_FALSE(letter.copy.properties.message_id);
    CHECK(letter.copy.properties.headers->size() == 2);

    SUBCASE("a long detail is cut, the byte counts never") {
        why.detail = "properties do not decode: " + std::string(5000, 'x');
        const auto cut = unreadable_dead_letter(read, why, 1);
        CHECK(cut.reason.size() < tarry::detail::max_reason_length);
        CHECK(contains(cut.reason, "(the dead letter's body: 7 bytes of raw properties, then the 4-byte body)"));
        CHECK(header_text(cut.copy, "x-tarry-reason") == cut.reason);
    }
    SUBCASE("an empty body is not mentioned") {
        const auto bare = unreadable_dead_letter(amqp::message{}, why, 1);
        CHECK(contains(bare.reason, "(the dead letter's body: 7 bytes of raw properties)"));
        CHECK(bare.copy.body == raw);
    }
}

TEST_CASE("a body over the limit: the original's properties travel, the body is empty") {
    amqp::message read;
    read.properties.message_id = "big";
    read.properties.expiration = "60000";
    read.properties.headers = amqp::field_table{{"x-death", amqp::field_array{}}, {"k", "v"}};
    amqp::unreadable_content why;
    why.error = wire::errc::body_too_large;
    why.detail = "body of 9000 bytes above max_body_size 1000, not kept";
    why.body_size = 9000;
    why.body_dropped = true;

    const auto letter = unreadable_dead_letter(read, why, 3);
    CHECK(letter.reason == "unreadable: body of 9000 bytes above max_body_size 1000, not kept");
    CHECK(letter.copy.body.empty());
    CHECK(letter.copy.properties.message_id == "big");
    CHECK_FALSE(letter.copy.properties.expiration);
    CHECK(letter.copy.properties.headers->find("x-death") == nullptr);
    CHECK(header_text(letter.copy, "k") == "v");
    CHECK(header_text(letter.copy, "x-tarry-reason") == letter.reason);
    CHECK(*letter.copy.properties.headers->find("x-tarry-attempt") == amqp::field_value(std::int64_t{3}));
}
