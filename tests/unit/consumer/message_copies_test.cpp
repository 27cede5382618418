// The copies republished in place of a delivery: a parked copy and a dead
// letter.
#include "message_copies.hpp"

#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
namespace amqp = tarry::amqp;

TEST_CASE("a parked copy keeps the message, drops x-death and expiration, and fixes the due time") {
    amqp::message m("body");
    m.properties.message_id = "job-1";
    m.properties.expiration = "60000";
    m.properties.timestamp = 1700000000;
    m.properties.headers = amqp::field_table{
        {"x-delay", std::int32_t{5000}},
        {"x-death", amqp::field_array{amqp::field_table{{"count", std::int64_t{1}}}}},
        {"x-first-death-queue", "jobs.wait.1000"},
        {"x-last-death-reason", "expired"},
        {"x-delivery-count", std::int64_t{4}},
        {"x-acquired-count", std::int64_t{9}},
        {"app", "kept"},
    };
    const auto due = tarry::wall_time(std::chrono::seconds(1700000005));
    const auto copy = tarry::detail::parked_copy(m, due, due - 1s);
    CHECK(copy.body == m.body);
    CHECK(copy.properties.message_id == m.properties.message_id);
    CHECK(copy.properties.timestamp == m.properties.timestamp);
    CHECK_FALSE(copy.properties.expiration);
    const auto& h = *copy.properties.headers;
    CHECK(h.find("x-death") == nullptr);
    CHECK(h.find("x-first-death-queue") == nullptr);
    CHECK(h.find("x-last-death-reason") == nullptr);
    CHECK(h.find("x-delay") == nullptr);
    CHECK(h.find("x-delivery-count") == nullptr);  // a quorum queue's count of the original's returns
    CHECK(h.find("x-acquired-count") == nullptr);  // RabbitMQ 4.3's count of its acquisitions
    CHECK(*h.find("app") == amqp::field_value("kept"));
    // Read back, it is due exactly when the original was, wherever it arrives.
    const auto read = tarry::contract::read_schedule(copy.properties, due + 1h, {});
    REQUIRE(std::holds_alternative<tarry::contract::schedule>(read));
    CHECK(std::get<tarry::contract::schedule>(read).due == due);
}

TEST_CASE("a dead letter carries its reason (bounded) and attempt") {
    amqp::message m("x");
    m.properties.expiration = "10";
    m.properties.headers = amqp::field_table{{"x-death", amqp::field_array{}}};
    const auto copy = tarry::detail::dead_letter_copy(m, "invalid-schedule: perform_job_at is NaN", 3);
    const auto& h = *copy.properties.headers;
    CHECK(*h.find("x-tarry-reason") == amqp::field_value("invalid-schedule: perform_job_at is NaN"));
    CHECK(*h.find("x-tarry-attempt") == amqp::field_value(std::int64_t{3}));
    CHECK(h.find("x-death") == nullptr);
    CHECK_FALSE(copy.properties.expiration);
    const auto long_copy = tarry::detail::dead_letter_copy(m, std::string(5000, 'e'), 1);
    const auto* reason = long_copy.properties.headers->find("x-tarry-reason")->get_if<std::string>();
    REQUIRE(reason);
    CHECK(reason->size() == tarry::detail::max_reason_length);
    CHECK(reason->substr(reason->size() - 3) == "...");
}
