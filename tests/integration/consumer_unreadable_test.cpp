// Messages the consumer cannot read or copy, against the real broker: a
// body over max_body_size, and a job whose retry copy would not fit one
// frame. Each is dead-lettered with reason "unreadable: ...", the jobs
// behind it run, and no connection or channel is lost. (Properties that do
// not decode come from a foreign client: tests/interop/poison_message_test.cpp.)
#include "consumer_fixture.hpp"

#include "tarry/amqp/wire/byte_reader.hpp"

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

TEST_CASE("a job whose retry copy would not fit a frame is dead-lettered unreadable, its headers in the body") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("unfit"));
    auto cfg = config_of(url);
    cfg.frame_max = 4096;
    // The handler's error goes on the retry copy (x-tarry-last-error): with
    // it, the copy's properties outgrow the frame the original fitted in.
    const std::string error(600, 'e');
    running_consumer rc(cfg, o, [&error](const tarry::job& j) {
        if (j.id() == "fat") return tarry::job_outcome::failure(error);
        return tarry::job_outcome::success();
    });

    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "fat", {{"pad", std::string(3700, 'p')}});
    publish_raw(ch, o.queue, "after", {});

    REQUIRE_MESSAGE(rc.log.wait_count(kind::dead, 1, 30s), rc.connection_transcript());
    REQUIRE(rc.log.wait_count(kind::succeeded, 1, 15s));
    const auto dead = rc.log.find(kind::dead, "fat");
    REQUIRE(dead);
    CHECK_MESSAGE(dead->reason.rfind("unreadable: its properties do not fit one frame (frame_max 4096) in its retry copy (", 0) == 0,
                  dead->reason);
    CHECK(rc.log.count(kind::retry) == 0);
    CHECK(rc.log.count(kind::failed) == 0);  // nothing of ours failed: nothing given back, no pause
    CHECK(rc.log.count(kind::run) == 2);
    const auto stats = rc.worker.stats();
    CHECK(stats.copy_failures == 0);
    CHECK(stats.channel_losses == 0);
    CHECK(stats.dead_lettered == 1);
    CHECK_MESSAGE(rc.connections_lost() == 0, rc.connection_transcript());
    rc.worker.stop();

    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == 1);
    const auto& letter = letters[0];
    CHECK(reason_of(letter) == dead->reason);
    CHECK(letter.properties.message_id == "fat");
    CHECK(letter.properties.headers->find("pad") == nullptr);
    // Its body: the original's properties, then its body.
    amqp::wire::byte_reader r(letter.body);
    const auto original = amqp::wire::decode_properties(r);
    REQUIRE(r.ok());
    CHECK(original.message_id == "fat");
    REQUIRE(original.headers);
    const auto* pad = original.headers->find("pad");
    REQUIRE(pad);
    CHECK(*pad == amqp::field_value(std::string(3700, 'p')));
    CHECK(letter.body_view().substr(r.position()) == "job fat");
    cleanup(c, o);
}
