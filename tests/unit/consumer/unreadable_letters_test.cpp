// The dead letters of messages that cannot be read or copied: what they
// carry (raw properties, then the body), the reason that says how to read
// them, and that every one fits the smallest frame_max.
#include "message_copies.hpp"
#include "../text_contains.hpp"

#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/amqp/wire/frame.hpp"

#include <doctest/doctest.h>

#include <string>

namespace amqp = tarry::amqp;
namespace wire = tarry::amqp::wire;
using tarry::detail::unfit_dead_letter;
using tarry::detail::unreadable_dead_letter;

namespace {

bool starts(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }
using unit_test_text::contains;

std::string header_text(const amqp::message& m, const char* name) {
    const auto* v = m.properties.headers ? m.properties.headers->find(name) : nullptr;
    const auto* s = v ? v->get_if<std::string>() : nullptr;
    return s ? *s : std::string();
}

std::vector<std::uint8_t> encoded(const amqp::basic_properties& p) {
    std::vector<std::uint8_t> out;
    wire::byte_writer w(out);
    wire::encode_properties(w, p);
    REQUIRE(w.ok());
    return out;
}

// Whether `m` can be sent as one content on a connection of `frame_max`.
bool sendable(const amqp::message& m, std::uint32_t frame_max) {
    std::vector<std::uint8_t> out;
    return !wire::encode_content(out, 1, m.properties, m.body, frame_max);
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

TEST_CASE("a message whose copy does not fit a frame: stripped properties, all of it in the body") {
    amqp::message original("payload");
    auto& p = original.properties;
    p.message_id = "m-1";
    p.correlation_id = "c-1";
    p.type = "t";
    p.app_id = "app";
    p.timestamp = 1700000000;
    p.delivery_mode = 2;
    p.priority = 4;
    p.content_type = "application/json";
    p.reply_to = "r";
    p.user_id = "someone";
    p.headers = amqp::field_table{{"big", std::string(4000, 'h')}};
    CHECK_FALSE(sendable(tarry::detail::dead_letter_copy(original, "attempts-exhausted: x", 1), 4096));

    const auto letter = unfit_dead_letter(original, "retry copy", 4096, 2);
    const auto block = encoded(p);
    CHECK(starts(letter.reason, "unreadable: its properties do not fit one frame (frame_max 4096) in its retry copy"));
    CHECK(contains(letter.reason, "(the dead letter's body: " + std::to_string(block.size()) +
                                      " bytes of its properties as encoded, then the 7-byte body)"));
    std::vector<std::uint8_t> body = block;
    body.insert(body.end(), original.body.begin(), original.body.end());
    CHECK(letter.copy.body == body);

    const auto& q = letter.copy.properties;
    CHECK(q.message_id == "m-1");
    CHECK(q.correlation_id == "c-1");
    CHECK(q.type == "t");
    CHECK(q.app_id == "app");
    CHECK(q.timestamp == p.timestamp);
    CHECK(q.delivery_mode == p.delivery_mode);
    CHECK(q.priority == p.priority);
    CHECK_FALSE(q.content_type);  // describes a body the letter no longer has
    CHECK_FALSE(q.reply_to);
    CHECK_FALSE(q.user_id);       // must equal the publishing connection's user
    CHECK(q.headers->size() == 2);
    CHECK(header_text(letter.copy, "x-tarry-reason") == letter.reason);
    CHECK(*q.headers->find("x-tarry-attempt") == amqp::field_value(std::int64_t{2}));
    CHECK(sendable(letter.copy, 4096));

    const auto unknown = unfit_dead_letter(original, "parked copy", 0, 1);
    CHECK(starts(unknown.reason, "unreadable: its properties do not fit one frame in its parked copy ("));
}

TEST_CASE("the unfit letter fits the smallest frame_max whatever the original") {
    amqp::message worst("b");
    const std::string s255(255, 's');
    auto& p = worst.properties;
    p.message_id = p.correlation_id = p.type = p.app_id = s255;
    p.content_type = p.content_encoding = p.reply_to = p.expiration = p.user_id = p.cluster_id = s255;
    p.timestamp = 1;
    p.delivery_mode = 2;
    p.priority = 9;
    p.headers = amqp::field_table{{"h", std::string(100000, 'h')}};
    const auto letter = unfit_dead_letter(worst, "dead letter", 4096, 4000000000u);
    CHECK(header_text(letter.copy, "x-tarry-reason").size() <= tarry::detail::max_reason_length);
    CHECK(sendable(letter.copy, wire::min_frame_max));
}
