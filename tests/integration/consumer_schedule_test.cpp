// The scheduling consumer against the real broker: never early, due order,
// no head-of-line blocking, the fast path, and every schedule encoding
// tarry accepts.
#include "consumer_fixture.hpp"

#include <random>

using namespace consumer_it;

namespace {
void check_on_time(const job_event& run) {
    CAPTURE(run.id);
    CHECK(run.at >= run.due);
    CHECK(lateness_ms(run) < late_ms);
}
}  // namespace

TEST_CASE("mixed delays published out of order run in due order, never early") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("order"));
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    std::mt19937 rng(7);
    std::vector<int> delays_ms;
    for (int i = 0; i < 30; ++i) delays_ms.push_back(300 + i * 97);
    std::shuffle(delays_ms.begin(), delays_ms.end(), rng);
    const auto t0 = sys::now();
    for (std::size_t i = 0; i < delays_ms.size(); ++i) {
        publish_raw(ch, o.queue, "j" + std::to_string(delays_ms[i]),
                    {{"perform_job_at", epoch(t0 + std::chrono::milliseconds(delays_ms[i]))}});
    }
    REQUIRE(rc.log.wait_count(kind::run, delays_ms.size(), 20s));
    const auto runs = rc.log.of(kind::run);
    for (const auto& r : runs) check_on_time(r);
    // Started in due order (jobs are ~100 ms apart; 4 workers).
    for (std::size_t i = 1; i < runs.size(); ++i) CHECK(runs[i - 1].due <= runs[i].due);
    REQUIRE(rc.log.wait_count(kind::succeeded, delays_ms.size(), 5s));
    rc.worker.stop();
    CHECK(rc.worker.stats().succeeded == delays_ms.size());
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(o.queue), use_future)).message_count == 0);
    cleanup(c, o);
}

TEST_CASE("head-of-line: jobs published far-first then near run near-first, on time") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("hol"));
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto t0 = sys::now();
    for (int i = 0; i < 200; ++i)
        publish_raw(ch, o.queue, "far" + std::to_string(i), {{"perform_job_at", epoch(t0 + 6s)}});
    for (int i = 0; i < 10; ++i)
        publish_raw(ch, o.queue, "near" + std::to_string(i), {{"perform_job_at", epoch(t0 + 1500ms)}});
    REQUIRE(rc.log.wait_count(kind::run, 10, 10s));
    const auto first = rc.log.of(kind::run);
    for (std::size_t i = 0; i < 10; ++i) {
        CHECK(first[i].id.rfind("near", 0) == 0);
        check_on_time(first[i]);
    }
    REQUIRE(rc.log.wait_count(kind::run, 210, 20s));
    for (const auto& r : rc.log.of(kind::run)) CHECK(r.at >= r.due);
    cleanup(c, o);
}

TEST_CASE("jobs due at arrival take the fast path and run at once") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("fast"));
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    publish_raw(ch, o.queue, "plain", {});                                   // no header
    publish_raw(ch, o.queue, "past", {{"perform_job_at", 1000000000.0}});    // 2001
    publish_raw(ch, o.queue, "zero", {{"x-delay", std::int32_t{0}}});
    publish_raw(ch, o.queue, "later", {{"perform_job_at", epoch(sys::now() + 1s)}});
    REQUIRE(rc.log.wait_count(kind::succeeded, 4, 10s));
    CHECK(rc.worker.stats().fast_path == 3);
    CHECK(rc.worker.stats().received == 4);
    cleanup(c, o);
}

TEST_CASE("the default delay applies to messages without a schedule") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("default-delay"));
    o.default_delay = 1200ms;
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto sent = sys::now();
    publish_raw(ch, o.queue, "d", {});
    REQUIRE(rc.log.wait_count(kind::run, 1, 10s));
    const auto run = rc.log.of(kind::run).front();
    check_on_time(run);
    CHECK(run.due >= sent + 1200ms);
    cleanup(c, o);
}

TEST_CASE("every accepted schedule encoding, published by tarry's client, runs when due") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("encodings"));
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(sys::now().time_since_epoch()).count();
    const std::int64_t soon = now_s + 2;  // whole seconds, for the integer encodings
    const auto soon_time = sys::time_point(std::chrono::seconds(soon));
    struct encoding {
        std::string id;
        amqp::field_value value;
        sys::time_point due;
        std::string header = "perform_job_at";
    };
    const std::vector<encoding> cases{
        {"double", epoch(soon_time) + 0.25, soon_time + 250ms},
        {"float", static_cast<float>(100.5), sys::time_point(100500ms)},  // past: due at once
        {"int8", std::int8_t{5}, sys::time_point(5s)},
        {"uint8", std::uint8_t{200}, sys::time_point(200s)},
        {"int16", std::int16_t{30000}, sys::time_point(30000s)},
        {"uint16", std::uint16_t{60000}, sys::time_point(60000s)},
        {"int32", static_cast<std::int32_t>(soon), soon_time},
        {"uint32", static_cast<std::uint32_t>(soon), soon_time},
        {"int64", std::int64_t{soon}, soon_time},
        {"decimal", amqp::decimal_value{1, static_cast<std::uint32_t>(soon % 100000000) * 10 + 5},
         sys::time_point(std::chrono::milliseconds((soon % 100000000) * 1000 + 500))},
        {"timestamp", amqp::timestamp_value{static_cast<std::uint64_t>(soon)}, soon_time},
        {"numeric-string", std::to_string(soon) + ".5", soon_time + 500ms},
        {"rfc3339", std::string("2001-09-09T01:46:40Z"), sys::time_point(1000000000s)},
        {"x-delay", std::int32_t{1500}, sys::time_point{}, "x-delay"},
    };
    const auto sent = sys::now();
    for (const auto& e : cases) publish_raw(ch, o.queue, e.id, {{e.header, e.value}});
    REQUIRE(rc.log.wait_count(kind::run, cases.size(), 15s));
    for (const auto& e : cases) {
        CAPTURE(e.id);
        const auto run = rc.log.find(kind::run, e.id);
        REQUIRE(run);
        CHECK(run->at >= run->due);
        if (e.header == "x-delay") {
            CHECK(run->due >= sent + 1500ms);
            CHECK(run->due < sent + 2500ms);
        } else {
            CHECK(run->due == e.due);
        }
    }
    CHECK(rc.log.count(kind::dead) == 0);
    cleanup(c, o);
}

TEST_CASE("x-delay counts from the timestamp property when it is set") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("x-delay-ts"));
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto stamp = std::chrono::duration_cast<std::chrono::seconds>(sys::now().time_since_epoch()).count() - 10;
    amqp::basic_properties p;
    p.timestamp = static_cast<std::uint64_t>(stamp);
    publish_raw(ch, o.queue, "stamped", {{"x-delay", std::int64_t{11500}}}, p);
    REQUIRE(rc.log.wait_count(kind::run, 1, 10s));
    const auto run = rc.log.of(kind::run).front();
    CHECK(run.due == sys::time_point(std::chrono::seconds(stamp)) + 11500ms);
    CHECK(run.at >= run.due);
    cleanup(c, o);
}
