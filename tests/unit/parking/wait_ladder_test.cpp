// The parking ladder: its wait queues' TTLs and which one a job waits in.
#include "tarry/amqp/message.hpp"
#include "tarry/parking/wait_ladder.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>

using namespace std::chrono_literals;
namespace amqp = tarry::amqp;

TEST_CASE("wait ladder: TTLs double up to the horizon, each queue dead-letters to the work queue") {
    const tarry::parking::wait_ladder ladder("jobs", 1s, 15min);
    const auto& qs = ladder.queues();
    REQUIRE(qs.size() == 10);  // 1 s … 512 s
    for (std::size_t i = 0; i < qs.size(); ++i) {
        const auto ttl = std::chrono::milliseconds(1000LL << i);
        CHECK(qs[i].ttl == ttl);
        CHECK(qs[i].name == "jobs.wait." + std::to_string(ttl.count()));
        CHECK(*qs[i].arguments.find("x-message-ttl") == amqp::field_value(std::int64_t{ttl.count()}));
        CHECK(*qs[i].arguments.find("x-dead-letter-exchange") == amqp::field_value(std::string()));
        CHECK(*qs[i].arguments.find("x-dead-letter-routing-key") == amqp::field_value(std::string("jobs")));
    }
}

TEST_CASE("wait ladder: choose takes the largest TTL that returns the job in time") {
    const tarry::parking::wait_ladder ladder("q", 1s, 8s);
    REQUIRE(ladder.queues().size() == 4);  // 1, 2, 4, 8 s
    CHECK(ladder.choose(999ms) == nullptr);
    CHECK(ladder.choose(1000ms)->ttl == 1s);
    CHECK(ladder.choose(3999ms)->ttl == 2s);
    CHECK(ladder.choose(4s)->ttl == 4s);
    CHECK(ladder.choose(1h)->ttl == 8s);
    const tarry::parking::wait_ladder one("q", 1s, 500ms);
    CHECK(one.queues().size() == 1);  // always one rung
    CHECK_THROWS_AS(tarry::parking::wait_ladder("q", 0ms, 1s), std::invalid_argument);
}
