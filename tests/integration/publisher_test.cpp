// The publisher against the real broker: the schedule on the way out,
// confirms, returns as errors, nacks, max_delay, a channel reopened after
// the broker closed it, and many threads publishing at once.
#include "consumer_fixture.hpp"

#include "tarry/contract/schedule_headers.hpp"
#include "tarry/publisher/publisher.hpp"

#include <thread>

using namespace consumer_it;

namespace {
std::string declare_queue(connected_client& c, amqp::field_table args = {}) {
    const auto q = unique_name("pub");
    value_of(c.open_channel().async_declare_queue(queue_opts(q, false, true, std::move(args)), use_future));
    return q;
}
amqp::message get_one(connected_client& c, const std::string& q) {
    auto got = value_of(c.open_channel().async_get(q, true, use_future));
    REQUIRE(got);
    return std::move(got->item.msg);
}
}  // namespace

TEST_CASE("publish now / at / after: perform_job_at, timestamp, message_id and persistence are set") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_queue(c);
    const auto at = sys::time_point(std::chrono::seconds(1900000000)) + 250ms;
    const auto before = sys::now();
    ok(pub.async_publish("", q, amqp::message("a"), tarry::job_schedule::at(at), use_future));
    ok(pub.async_publish("", q, amqp::message("b"), tarry::job_schedule::after(90s), use_future));
    ok(pub.async_publish("", q, amqp::message("c"), tarry::job_schedule::now(), use_future));
    const auto after = sys::now();
    auto due_of = [](const amqp::message& m) {
        auto r = tarry::contract::read_schedule(m.properties, sys::now(), {});
        REQUIRE(std::holds_alternative<tarry::contract::schedule>(r));
        return std::get<tarry::contract::schedule>(r).due;
    };
    const auto a = get_one(c, q);
    REQUIRE(a.properties.headers);
    CHECK(a.properties.headers->find("perform_job_at")->get_if<double>());
    CHECK(due_of(a) == at);
    CHECK(a.properties.delivery_mode == std::optional<std::uint8_t>(2));
    REQUIRE(a.properties.message_id);
    CHECK(a.properties.message_id->size() == 32);
    REQUIRE(a.properties.timestamp);
    CHECK(*a.properties.timestamp >= static_cast<std::uint64_t>(epoch(before)) - 1);
    const auto b = get_one(c, q);
    CHECK(due_of(b) >= before + 90s);
    CHECK(due_of(b) <= after + 90s + 1us);
    CHECK(b.properties.message_id != a.properties.message_id);
    const auto now_job = get_one(c, q);
    CHECK(due_of(now_job) >= before);
    CHECK(due_of(now_job) <= after + 1us);
    CHECK(pub.stats().confirmed == 3);
}

TEST_CASE("a message_id and delivery mode the caller set are kept") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_queue(c);
    amqp::message m("x");
    m.properties.message_id = "mine";
    m.properties.delivery_mode = 1;
    ok(pub.async_publish("", q, m, tarry::job_schedule::now(), use_future));
    const auto got = get_one(c, q);
    CHECK(got.properties.message_id == std::optional<std::string>("mine"));
    CHECK(got.properties.delivery_mode == std::optional<std::uint8_t>(1));
}

TEST_CASE("a delay above max_delay is an error and nothing is sent") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher_options po;
    po.max_delay = 60s;
    tarry::publisher pub(c.conn, po);
    const auto q = declare_queue(c);
    CHECK(wait(pub.async_publish("", q, amqp::message("far"), tarry::job_schedule::after(61s), use_future)) ==
          tarry::publish_errc::delay_exceeds_max);
    CHECK(wait(pub.async_publish("", q, amqp::message("ancient"),
                                 tarry::job_schedule::at(sys::time_point(-1s)), use_future)) ==
          tarry::publish_errc::invalid_schedule);
    ok(pub.async_publish("", q, amqp::message("ok"), tarry::job_schedule::after(60s), use_future));
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(q), use_future)).message_count == 1);
    CHECK(pub.stats().published == 1);
}

TEST_CASE("unroutable publishes fail with unroutable, each matched to its own publish") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_queue(c);
    std::vector<std::future<std::error_code>> results;
    for (int i = 0; i < 20; ++i) {
        amqp::message m("m" + std::to_string(i));
        const bool lost = i % 3 == 0;
        results.push_back(pub.async_publish("", lost ? "no-such-queue-" + q : q, std::move(m),
                                            tarry::job_schedule::now(), use_future));
    }
    int routed = 0;
    for (int i = 0; i < 20; ++i) {
        CAPTURE(i);
        const auto ec = wait(std::move(results[static_cast<std::size_t>(i)]));
        if (i % 3 == 0) {
            CHECK(ec == tarry::publish_errc::unroutable);
        } else {
            CHECK_FALSE(ec);
            ++routed;
        }
    }
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(q), use_future)).message_count ==
          static_cast<std::uint32_t>(routed));
    CHECK(pub.stats().returned == 7);
    // as-is publishes share the rule.
    CHECK(wait(pub.async_publish_as_is("", "no-such-queue-" + q, amqp::message("x"), use_future)) ==
          tarry::publish_errc::unroutable);
}

TEST_CASE("a full queue with reject-publish: the publish fails with publish_nacked") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_queue(c, {{"x-max-length", std::int32_t{1}}, {"x-overflow", "reject-publish"}});
    ok(pub.async_publish_as_is("", q, amqp::message("1"), use_future));
    CHECK(wait(pub.async_publish_as_is("", q, amqp::message("2"), use_future)) == amqp::errc::publish_nacked);
}

TEST_CASE("after the broker closes the channel (missing exchange), the next publish opens a new one") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_queue(c);
    const auto ec = wait(pub.async_publish_as_is("no-such-exchange-" + q, "k", amqp::message("x"), use_future));
    CHECK(ec == amqp::reply_code::not_found);
    ok(pub.async_publish_as_is("", q, amqp::message("y"), use_future));
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(q), use_future)).message_count == 1);
}

TEST_CASE("four threads publishing at once: every publish confirmed, headers byte for byte") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_queue(c);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::future<std::error_code>> fs;
            for (int i = 0; i < 250; ++i) {
                amqp::message m("t" + std::to_string(t) + "-" + std::to_string(i));
                m.properties.headers = amqp::field_table{{"n", std::int32_t{i}}, {"d", 1.5}};
                m.properties.content_type = "text/plain";
                fs.push_back(pub.async_publish_as_is("", q, std::move(m), use_future));
            }
            for (auto& f : fs)
                if (f.get()) ++failures;
        });
    }
    for (auto& th : threads) th.join();
    CHECK(failures == 0);
    CHECK(value_of(c.open_channel().async_declare_queue(passive_queue(q), use_future)).message_count == 1000);
    const auto one = get_one(c, q);
    CHECK(one.properties.content_type == std::optional<std::string>("text/plain"));
    CHECK(*one.properties.headers->find("d") == amqp::field_value(1.5));
    CHECK_FALSE(one.properties.headers->find("perform_job_at"));  // as is: nothing added
}
