// A held job's message: packed in one allocation, or kept as decoded.
#include "packed_message.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
namespace amqp = tarry::amqp;

TEST_CASE("a packed message unpacks to the message it was, in one allocation of its wire size") {
    amqp::message m("a body of some length");
    m.properties.message_id = "id-1";
    m.properties.timestamp = 1700000000;
    m.properties.delivery_mode = 2;
    m.properties.headers = amqp::field_table{{"perform_job_at", 1700000005.25}, {"n", std::int32_t{-3}}};
    const auto p = tarry::detail::packed_message::pack(m);
    CHECK(p.unpack() == m);
    CHECK(p.properties() == m.properties);
    CHECK(p.body() == "a body of some length");
    CHECK(p.size() < m.body.size() + 80);  // flags, id, timestamp, mode and a two-entry table
    const auto empty = tarry::detail::packed_message::pack(amqp::message{});
    CHECK(empty.unpack() == amqp::message{});
    CHECK(tarry::detail::packed_message{}.unpack() == amqp::message{});
    CHECK(tarry::detail::packed_message{}.size() == 0);
    CHECK(tarry::detail::packed_message{}.body().empty());
    // The sizes live in the allocation: a held job carries one pointer.
    static_assert(sizeof(tarry::detail::packed_message) == sizeof(void*));
    amqp::message body_only(std::string(1000, 'b'));
    const auto q = tarry::detail::packed_message::pack(body_only);
    CHECK(q.size() == 1000 + 2);  // two bytes of property flags, nothing set
    CHECK(q.unpack() == body_only);
    CHECK(q.kept() == nullptr);
}

TEST_CASE("a kept message is the decoded message itself, moved; moves hand it over") {
    amqp::message m("kept body");
    m.properties.message_id = "id-2";
    m.properties.headers = amqp::field_table{{"perform_job_at", 1700000005.25}};
    const amqp::message original = m;
    auto k = tarry::detail::packed_message::keep(std::move(m));
    REQUIRE(k.kept() != nullptr);
    CHECK(*k.kept() == original);
    CHECK(k.unpack() == original);
    CHECK(k.properties() == original.properties);
    CHECK(k.body() == "kept body");
    CHECK(k.size() == original.body.size());
    const auto* where = k.kept();
    tarry::detail::packed_message moved(std::move(k));
    CHECK(moved.kept() == where);  // the same object, not a copy
    CHECK(k.kept() == nullptr);    // NOLINT: the moved-from handle is empty
    CHECK(k.unpack() == amqp::message{});
    // Assigning over a packed message frees it and takes the kept one.
    auto p = tarry::detail::packed_message::pack(original);
    p = std::move(moved);
    CHECK(p.kept() == where);
    CHECK(p.unpack() == original);
    // And a packed one can replace a kept one (what push_held does).
    p = tarry::detail::packed_message::pack(*p.kept());
    CHECK(p.kept() == nullptr);
    CHECK(p.unpack() == original);
}
