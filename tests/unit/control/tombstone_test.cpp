// Tombstones as control-stream entries, and the stream's name and fixed
// arguments.
#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <limits>

using namespace std::chrono_literals;
namespace control = tarry::control;
namespace wire = tarry::amqp::wire;
using tarry::wall_time;

namespace {

wall_time at_s(std::int64_t s) { return wall_time(std::chrono::seconds(s)); }

control::tombstone sample() { return {"job-1", 1795613756873786u, at_s(1795613756)}; }

}  // namespace

TEST_CASE("a tombstone's entry: type, message_id, timestamp, generation, persistent, empty body") {
    const auto m = control::to_message(sample());
    CHECK(m.body.empty());
    CHECK(m.properties.type == std::string("tarry.tombstone"));
    CHECK(m.properties.message_id == std::string("job-1"));
    CHECK(m.properties.timestamp == 1795613756u);
    CHECK(m.properties.delivery_mode == 2);
    CHECK(tarry::contract::read_generation(m.properties) == 1795613756873786u);
}

TEST_CASE("a tombstone reads back as written; its time to the whole second") {
    std::string why = "stale";
    auto t = sample();
    t.written += 700ms;
    const auto back = control::read_tombstone(control::to_message(t).properties, why);
    REQUIRE(back);
    CHECK(why.empty());
    CHECK(*back == sample());
}

TEST_CASE("an entry of another type is no tombstone and no error: the reader skips it") {
    std::string why = "stale";
    auto m = control::to_message(sample());
    m.properties.type = std::string("tarry.marker");
    CHECK_FALSE(control::read_tombstone(m.properties, why));
    CHECK(why.empty());
    m.properties.type.reset();
    CHECK_FALSE(control::read_tombstone(m.properties, why));
    CHECK(why.empty());
}

TEST_CASE("a malformed tombstone is refused with what is wrong") {
    std::string why;
    SUBCASE("no message_id") {
        auto m = control::to_message(sample());
        m.properties.message_id.reset();
        CHECK_FALSE(control::read_tombstone(m.properties, why));
        CHECK(why.find("message_id") != std::string::npos);
    }
    SUBCASE("an empty message_id") {
        auto m = control::to_message(sample());
        m.properties.message_id = std::string();
        CHECK_FALSE(control::read_tombstone(m.properties, why));
        CHECK(why.find("message_id") != std::string::npos);
    }
    SUBCASE("no timestamp") {
        auto m = control::to_message(sample());
        m.properties.timestamp.reset();
        CHECK_FALSE(control::read_tombstone(m.properties, why));
        CHECK(why.find("timestamp") != std::string::npos);
    }
    SUBCASE("no generation, generation 0, a negative one or a string") {
        for (const wire::field_value& v : {wire::field_value(std::int64_t{0}), wire::field_value(std::int64_t{-3}),
                                          wire::field_value("17")}) {
            auto m = control::to_message(sample());
            m.properties.headers->set("x-tarry-generation", v);
            CHECK_FALSE(control::read_tombstone(m.properties, why));
            CHECK(why.find("x-tarry-generation") != std::string::npos);
        }
        auto m = control::to_message(sample());
        m.properties.headers.reset();
        CHECK_FALSE(control::read_tombstone(m.properties, why));
        CHECK(why.find("x-tarry-generation") != std::string::npos);
    }
}

TEST_CASE("a timestamp past the clock's range reads as the latest time the clock holds") {
    std::string why;
    auto m = control::to_message(sample());
    m.properties.timestamp = std::numeric_limits<std::uint64_t>::max();
    const auto back = control::read_tombstone(m.properties, why);
    REQUIRE(back);
    CHECK(back->written > at_s(1795613756));
    CHECK(back->written <= wall_time::max());
}

TEST_CASE("the control stream: its name and the one argument set of every active declare") {
    CHECK(control::stream_name("jobs") == "jobs.tarry.control");
    const auto args = control::stream_arguments();
    REQUIRE(args.find("x-queue-type") != nullptr);
    CHECK(*args.find("x-queue-type")->get_if<std::string>() == "stream");
    CHECK(*args.find("x-max-age")->get_if<std::string>() == "7D");
    CHECK(*args.find("x-stream-max-segment-size-bytes")->get_if<std::int64_t>() == 1'000'000);
    CHECK(args.size() == 3);
    CHECK(args == control::stream_arguments());  // the same every time: a redeclare never differs
}
