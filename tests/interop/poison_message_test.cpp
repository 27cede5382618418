// Interop: one poison message stops no work. pika publishes a message whose
// headers nest 40 tables deep (valid AMQP 0-9-1, which RabbitMQ delivers and
// tarry's codec refuses: tables nest at most 32 deep), then five jobs queue
// behind it. tarry's consumer dead-letters the poison one with reason
// "unreadable: ..." and its raw properties in the dead letter's body, runs
// the five, and never loses a connection or a channel; replay leaves that
// dead letter alone.
#include "../integration/consumer_fixture.hpp"
#include "python_peer.hpp"

#include "tarry/consumer/replay.hpp"

using namespace consumer_it;

namespace {

std::vector<std::uint8_t> from_hex(std::string_view text) {
    std::vector<std::uint8_t> out;
    const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (std::size_t i = 0; i + 1 < text.size() && text[i] != '\n'; i += 2)
        out.push_back(static_cast<std::uint8_t>(nibble(text[i]) * 16 + nibble(text[i + 1])));
    return out;
}

}  // namespace

TEST_CASE("headers nested 40 deep from pika: dead-lettered unreadable, the jobs behind it run, no reconnect") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("poison"));
    running_consumer rc(url, o);

    auto r = tarry_test::run_python("publish_poison.py",
                                    {"--url", url, "--queue", o.queue, "--id", "poison", "--depth", "40"}, 60s);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    const auto raw = from_hex(r.out);
    REQUIRE(raw.size() > 40 * 7);

    auto ch = confirm_channel(c);
    for (int i = 0; i < 5; ++i) publish_raw(ch, o.queue, "behind-" + std::to_string(i), {});

    REQUIRE_MESSAGE(rc.log.wait_count(kind::succeeded, 5, 30s), rc.connection_transcript());
    REQUIRE(rc.log.wait_count(kind::dead, 1, 15s));
    for (int i = 0; i < 5; ++i) CHECK(rc.log.find(kind::succeeded, "behind-" + std::to_string(i)));
    const auto dead = rc.log.of(kind::dead);
    REQUIRE(dead.size() == 1);
    CHECK(dead[0].id.empty());  // its message_id is in the properties nobody could read
    CHECK_MESSAGE(dead[0].reason.rfind("unreadable: properties do not decode: ", 0) == 0, dead[0].reason);
    CHECK_MESSAGE(dead[0].reason.find("nested deeper than 32") != std::string::npos, dead[0].reason);
    CHECK(rc.log.count(kind::run) == 5);
    CHECK(rc.log.count(kind::failed) == 0);

    const auto stats = rc.worker.stats();
    CHECK(stats.received == 6);
    CHECK(stats.dead_lettered == 1);
    CHECK(stats.channel_losses == 0);
    CHECK(stats.copy_failures == 0);
    CHECK_MESSAGE(rc.connections_lost() == 0, rc.connection_transcript());
    rc.worker.stop();

    // Replaying every dead letter leaves it where it is: it holds no job.
    const auto replayed = tarry::replay_dead_letters(c.conn, {o.queue, "", "", 100});
    CHECK(replayed.moved == 0);
    CHECK(replayed.skipped == 1);

    const auto letters = dead_letters(c, o);
    REQUIRE(letters.size() == 1);
    const auto& letter = letters[0];
    CHECK(reason_of(letter) == dead[0].reason);
    // The body: the properties block exactly as pika encoded it (RabbitMQ
    // passes it through), then the original body.
    const std::string original_body = "poison poison";
    REQUIRE(letter.body.size() == raw.size() + original_body.size());
    CHECK(std::equal(raw.begin(), raw.end(), letter.body.begin()));
    CHECK(letter.body_view().substr(raw.size()) == original_body);
    CHECK_MESSAGE(reason_of(letter).find("(the dead letter's body: " + std::to_string(raw.size()) +
                                         " bytes of raw properties, then the 13-byte body)") != std::string::npos,
                  reason_of(letter));
    cleanup(c, o);
}
