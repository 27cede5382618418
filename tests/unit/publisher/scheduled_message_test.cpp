// What the publisher writes on a job with its schedule.
#include "scheduled_message.hpp"

#include "tarry/contract/schedule_headers.hpp"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using tarry::wall_time;

namespace {

const wall_time t0 = wall_time(std::chrono::microseconds(1'795'613'756'873'786));

}  // namespace

TEST_CASE("schedule_message writes the schedule, the generation, an id and the mode; a refusal writes nothing") {
    tarry::publisher_options o;
    tarry::amqp::message m("body");
    auto why = tarry::detail::schedule_message(m, tarry::job_schedule::after(5s), t0, 77, o);
    CHECK_FALSE(why.code);
    CHECK(tarry::contract::read_generation(m.properties) == 77);
    CHECK(m.properties.message_id.has_value());
    CHECK(m.properties.delivery_mode == 2);
    const auto due = tarry::contract::read_schedule(m.properties, t0, {});
    REQUIRE(std::holds_alternative<tarry::contract::schedule>(due));
    CHECK(std::get<tarry::contract::schedule>(due).due == t0 + 5s);

    o.max_delay = 1s;
    tarry::amqp::message refused("body");
    why = tarry::detail::schedule_message(refused, tarry::job_schedule::after(5s), t0, 78, o);
    CHECK(why.code == tarry::publish_errc::delay_exceeds_max);
    CHECK(refused == tarry::amqp::message("body"));
}
