// The publisher's commands on a queue's control stream, against the real
// broker: cancel and reschedule append confirmed tombstones, the stream is
// declared with its one argument set, a reschedule's new copy carries the
// tombstone's generation, refusals send nothing, and a stream declared
// elsewhere with other arguments is reported as such. Every job published
// carries a generation. The schedule commands: their refusals, and listing.
#include "consumer_fixture.hpp"
#include "control_entries.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/periodic/error.hpp"
#include "tarry/publisher/publisher.hpp"

using namespace consumer_it;

namespace {

std::uint64_t now_us() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(sys::now().time_since_epoch()).count());
}
/// The declare's error of `queue`'s control stream, passive: empty when it exists.
std::error_code stream_exists(connected_client& c, const std::string& queue) {
    auto [ec, info] = wait(c.open_channel().async_declare_queue(passive_queue(tarry::control::stream_name(queue)),
                                                                use_future));
    return ec;
}

}  // namespace

TEST_CASE("cancel: declares the control stream with its fixed arguments and appends a confirmed tombstone") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    CHECK(stream_exists(c, q) == amqp::reply_code::not_found);

    tarry::publisher pub(c.conn);
    const auto before = now_us();
    amqp::diagnostics why;
    ok(pub.async_cancel(q, "job-1", why, use_future));
    const auto after = now_us();
    CHECK_FALSE(why.code);

    // The stream exists with exactly the arguments every command declares.
    amqp::queue_options same;
    same.name = tarry::control::stream_name(q);
    same.durable = true;
    same.arguments = tarry::control::stream_arguments();
    auto [ec, info] = wait(c.open_channel().async_declare_queue(same, use_future));
    CHECK_MESSAGE(!ec, ec.message());

    const auto entries = read_tombstones(c, q, 1);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].job_id == "job-1");
    CHECK(entries[0].generation >= before);
    CHECK(entries[0].generation <= after + 1000);
    CHECK(entries[0].written >= sys::time_point(std::chrono::microseconds(before)) - 1s);
    CHECK(pub.stats().confirmed == 1);
    CHECK(pub.stats().failed == 0);
}

TEST_CASE("cancel twice: one declare, two tombstones in order, generations increasing") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    tarry::publisher pub(c.conn);
    ok(pub.async_cancel(q, "a", use_future));
    ok(pub.async_cancel(q, "b", use_future));
    tarry::publisher other(c.conn);  // another publisher finds the stream declared
    ok(other.async_cancel(q, "a", use_future));
    const auto entries = read_tombstones(c, q, 3);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].job_id == "a");
    CHECK(entries[1].job_id == "b");
    CHECK(entries[2].job_id == "a");
    CHECK(entries[0].generation < entries[1].generation);
    CHECK(entries[1].generation < entries[2].generation);
}

TEST_CASE("reschedule: a tombstone, then the new copy under the job's id with the same generation") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    tarry::publisher pub(c.conn);
    amqp::message m("new body");
    m.properties.message_id = "ignored";
    m.properties.headers = amqp::field_table{{"keep", std::int32_t{7}}};
    const auto before = sys::now();
    ok(pub.async_reschedule(q, "job-2", tarry::job_schedule::after(90s), m, use_future));
    const auto after = sys::now();

    const auto entries = read_tombstones(c, q, 1);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].job_id == "job-2");

    auto got = value_of(c.open_channel().async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    const auto& copy = got->item.msg;
    CHECK(copy.body_view() == "new body");
    CHECK(copy.properties.message_id == std::optional<std::string>("job-2"));
    CHECK(tarry::contract::read_generation(copy.properties) == entries[0].generation);
    CHECK(*copy.properties.headers->find("keep") == amqp::field_value(std::int32_t{7}));
    CHECK(copy.properties.delivery_mode == std::optional<std::uint8_t>(2));
    const auto due = tarry::contract::read_schedule(copy.properties, sys::now(), {});
    REQUIRE(std::holds_alternative<tarry::contract::schedule>(due));
    CHECK(std::get<tarry::contract::schedule>(due).due >= before + 90s);
    CHECK(std::get<tarry::contract::schedule>(due).due <= after + 90s);
    CHECK(pub.stats().confirmed == 2);

    // Twice quickly: the second's generation is above the first's copy.
    ok(pub.async_reschedule(q, "job-2", tarry::job_schedule::after(1s), m, use_future));
    const auto both = read_tombstones(c, q, 2);
    REQUIRE(both.size() == 2);
    CHECK(both[1].generation > both[0].generation);
}

TEST_CASE("refused before sending: an empty or over-long id, a schedule past max_delay; nothing is declared") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    tarry::publisher_options po;
    po.max_delay = 60s;
    tarry::publisher pub(c.conn, po);
    amqp::diagnostics why;
    CHECK(wait(pub.async_cancel(q, "", why, use_future)) == amqp::errc::invalid_argument);
    CHECK_MESSAGE(why.message.find("empty") != std::string::npos, why.message);
    CHECK(wait(pub.async_cancel(q, std::string(256, 'x'), why, use_future)) == amqp::errc::invalid_argument);
    CHECK_MESSAGE(why.message.find("256 bytes") != std::string::npos, why.message);
    CHECK(wait(pub.async_reschedule(q, "", tarry::job_schedule::now(), amqp::message("x"), use_future)) ==
          amqp::errc::invalid_argument);
    CHECK(wait(pub.async_reschedule(q, "job", tarry::job_schedule::after(61s), amqp::message("x"), why,
                                    use_future)) == tarry::publish_errc::delay_exceeds_max);
    CHECK_MESSAGE(why.message.find("max_delay") != std::string::npos, why.message);
    CHECK(stream_exists(c, q) == amqp::reply_code::not_found);
    CHECK(pub.stats().published == 0);
    CHECK(pub.stats().failed == 4);
}

TEST_CASE("a control stream declared elsewhere with other arguments: the command fails with 406, said so") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    amqp::queue_options other;
    other.name = tarry::control::stream_name(q);
    other.durable = true;
    other.arguments = amqp::field_table{{"x-queue-type", std::string("stream")}, {"x-max-age", std::string("1D")}};
    value_of(c.open_channel().async_declare_queue(other, use_future));

    tarry::publisher pub(c.conn);
    amqp::diagnostics why;
    CHECK(wait(pub.async_cancel(q, "job", why, use_future)) == amqp::reply_code::precondition_failed);
    CHECK_MESSAGE(why.message.find("cannot declare the control stream '" + other.name + "'") != std::string::npos,
                  why.message);
    CHECK_MESSAGE(why.message.find("inequivalent arg") != std::string::npos, why.message);
    // The publisher's own channel is unharmed: a publish goes on.
    ok(pub.async_publish("", q, amqp::message("still"), tarry::job_schedule::now(), use_future));
}

TEST_CASE("reschedule to a queue that does not exist: unroutable (the job stays cancelled: repeat it)") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = unique_name("control-missing");
    control_stream_cleanup cleanup{c, q};
    tarry::publisher pub(c.conn);
    amqp::diagnostics why;
    CHECK(wait(pub.async_reschedule(q, "job", tarry::job_schedule::now(), amqp::message("x"), why, use_future)) ==
          tarry::publish_errc::unroutable);
    CHECK_MESSAGE(why.message.find(q) != std::string::npos, why.message);
    CHECK(read_tombstones(c, q, 1).size() == 1);
}

TEST_CASE("every job published carries x-tarry-generation: µs now, increasing, replacing a given one") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    tarry::publisher pub(c.conn);
    amqp::message stale("x");
    stale.properties.headers = amqp::field_table{{"x-tarry-generation", std::int64_t{5}}};
    const auto before = now_us();
    ok(pub.async_publish("", q, stale, tarry::job_schedule::now(), use_future));
    ok(pub.async_publish("", q, amqp::message("y"), tarry::job_schedule::after(1s), use_future));
    const auto after = now_us();
    std::vector<std::uint64_t> g;
    for (int i = 0; i < 2; ++i) {
        auto got = value_of(c.open_channel().async_get(q, {.no_ack = true}, use_future));
        REQUIRE(got);
        g.push_back(tarry::contract::read_generation(got->item.msg.properties));
    }
    CHECK(g[0] >= before);
    CHECK(g[1] > g[0]);
    CHECK(g[1] <= after + 1000);
}

TEST_CASE("schedule commands refused before sending: the id, the spec's refusals, a schedule already ended") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    tarry::publisher pub(c.conn);
    amqp::diagnostics why;
    const auto every = [](long ms) {
        tarry::periodic::schedule_spec s;
        s.when = tarry::periodic::every_interval{std::chrono::milliseconds(ms), {}};
        return s;
    };
    CHECK(wait(pub.async_upsert_schedule(q, "", every(1000), amqp::message("x"), why, use_future)) ==
          amqp::errc::invalid_argument);
    CHECK_MESSAGE(why.message.find("empty") != std::string::npos, why.message);
    CHECK(wait(pub.async_upsert_schedule(q, std::string(231, 's'), every(1000), amqp::message("x"), why,
                                         use_future)) == amqp::errc::invalid_argument);
    CHECK_MESSAGE(why.message.find("231 bytes") != std::string::npos, why.message);
    CHECK(wait(pub.async_remove_schedule(q, "", why, use_future)) == amqp::errc::invalid_argument);
    CHECK(wait(pub.async_upsert_schedule(q, "s", every(0), amqp::message("x"), why, use_future)) ==
          tarry::periodic::errc::invalid_schedule);
    CHECK_MESSAGE(why.message.find("schedule 's': every: the interval") != std::string::npos, why.message);
    auto cron = every(1000);
    cron.when = *tarry::periodic::parse_cron("@daily").expression;
    cron.time_zone = "Nowhere/Town";
    CHECK(wait(pub.async_upsert_schedule(q, "s", cron, amqp::message("x"), why, use_future)) ==
          tarry::periodic::errc::unknown_time_zone);
    auto ended = every(1000);
    ended.end = sys::now() - 1h;
    CHECK(wait(pub.async_upsert_schedule(q, "s", ended, amqp::message("x"), why, use_future)) ==
          tarry::periodic::errc::invalid_schedule);
    CHECK_MESSAGE(why.message.find("no occurrence left") != std::string::npos, why.message);
    // Nothing was written: no stream, and the queue is empty.
    CHECK(stream_exists(c, q) == amqp::reply_code::not_found);
    CHECK_FALSE(value_of(c.open_channel().async_get(q, {.no_ack = true}, use_future)));
}

TEST_CASE("list schedules: none without a stream; the live ones after upserts and a removal") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "control");
    control_stream_cleanup cleanup{c, q};
    tarry::publisher pub(c.conn);
    amqp::diagnostics why;
    auto [e0, none] = pub.async_list_schedules(q, 5s, why, use_future).get();
    CHECK_MESSAGE(!e0, why.message);
    CHECK(none.empty());

    tarry::periodic::schedule_spec s;
    s.when = tarry::periodic::every_interval{1000ms, {}};
    ok(pub.async_upsert_schedule(q, "one", s, amqp::message("1"), use_future));
    ok(pub.async_upsert_schedule(q, "two", s, amqp::message("2"), use_future));
    s.when = tarry::periodic::every_interval{5000ms, {}};
    ok(pub.async_upsert_schedule(q, "one", s, amqp::message("1b"), use_future));
    ok(pub.async_remove_schedule(q, "two", use_future));
    auto [e1, live] = pub.async_list_schedules(q, 5s, why, use_future).get();
    CHECK_MESSAGE(!e1, why.message);
    REQUIRE(live.size() == 1);
    CHECK(live[0].schedule_id == "one");
    CHECK(live[0].spec == "every 5000ms");
    CHECK(live[0].template_message.body_view() == "1b");
}
