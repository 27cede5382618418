// Messages the consumer cannot read, against the real broker: a body over
// max_body_size is dead-lettered with reason "unreadable: ...", the jobs
// behind it run, and no connection or channel is lost. (Properties that do
// not decode come from a foreign client: tests/interop/poison_message_test.cpp.)
#include "consumer_fixture.hpp"

using namespace consumer_it;

TEST_CASE("a body over max_body_size is dead-lettered unreadable, unbuffered; the jobs behind it run") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("too-big"));
    auto cfg = config_of(url);
    cfg.max_body_size = 1000;
    running_consumer rc(cfg, o);

    auto ch = confirm_channel(c);
    amqp::basic_properties p;
    p.message_id = "big";
    p.headers = amqp::field_table{{"k", "v"}};
    ok(ch.async_publish("", o.queue, amqp::message(std::string(300000, 'b'), p), {}, use_future));
    for (int i = 0; i < 3; ++i) publish_raw(ch, o.queue, "behind-" + std::to_string(i), {});

    REQUIRE_MESSAGE(rc.log.wait_count(kind::succeeded, 3, 30s), rc.connection_transcript());
    REQUIRE(rc.log.wait_count(kind::dead, 1, 15s));
    const auto dead = rc.log.find(kind::dead, "big");
    REQUIRE(dead);
    const std::string reason = "unreadable: body of 300000 bytes above max_body_size 1000, not kept";
    CHECK(dead->reason == reason);
    CHECK_FALSE(rc.log.find(kind::run, "big"));
    const auto stats = rc.worker.stats();
    CHECK(stats.dead_lettered == 1);
    CHECK(stats.channel_losses == 0);
    CHECK_MESSAGE(rc.connections_lost() == 0, rc.connection_transcript());
    rc.worker.stop();

    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == 1);
    CHECK(letters[0].properties.message_id == "big");
    CHECK(reason_of(letters[0]) == reason);
    CHECK(letters[0].properties.headers->find("k") != nullptr);
    CHECK(letters[0].body.empty());
    cleanup(c, o);
}
