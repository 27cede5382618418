// The publisher against the real broker: the schedule on the way out,
// confirms, returns matched per publish, nacks, max_delay and invalid
// schedules, a channel reopened after the broker closed it or the
// connection was cut, many threads publishing at once on one channel,
// copies published byte for byte, a destroyed publisher's channel, and a
// broker that stops confirming (confirm_timeout).
#include "consumer_fixture.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"

#include "tarry/amqp/wire/byte_writer.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/post.hpp>

#include <cmath>
#include <latch>
#include <limits>
#include <thread>

using namespace consumer_it;

namespace {

std::uint32_t depth(connected_client& c, const std::string& q) {
    return value_of(c.open_channel().async_declare_queue(passive_queue(q), use_future)).message_count;
}
amqp::message get_one(connected_client& c, const std::string& q) {
    auto got = value_of(c.open_channel().async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    return std::move(got->item.msg);
}
std::int64_t micros(sys::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
/// perform_job_at as written (it must be a double), in microseconds.
std::int64_t written_due(const amqp::message& m) {
    REQUIRE(m.properties.headers);
    const auto* v = m.properties.headers->find("perform_job_at");
    REQUIRE(v);
    const auto* d = v->get_if<double>();
    REQUIRE_MESSAGE(d, "perform_job_at has tag '" << amqp::wire::field_tag(*v) << "'");
    return std::llround(*d * 1e6);
}
std::vector<std::uint8_t> encoded(const amqp::basic_properties& p) {
    std::vector<std::uint8_t> out;
    amqp::wire::byte_writer w(out);
    amqp::wire::encode_properties(w, p);
    return out;
}

}  // namespace

TEST_CASE("publish now / at / after: perform_job_at (a double), timestamp, message_id, persistence") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    const auto at = sys::time_point(std::chrono::seconds(1900000000)) + 250ms + 17us;
    const auto before = sys::now();
    ok(pub.async_publish("", q, amqp::message("a"), tarry::job_schedule::at(at), use_future));
    ok(pub.async_publish("", q, amqp::message("b"), tarry::job_schedule::after(90s), use_future));
    ok(pub.async_publish("", q, amqp::message("c"), tarry::job_schedule::now(), use_future));
    ok(pub.async_publish("", q, amqp::message("d"),
                         tarry::job_schedule::after(std::chrono::duration<double>(2.5)), use_future));
    const auto after = sys::now();

    const auto a = get_one(c, q);
    CHECK(std::llabs(written_due(a) - micros(at)) <= 1);
    CHECK(a.properties.delivery_mode == std::optional<std::uint8_t>(2));
    REQUIRE(a.properties.message_id);
    CHECK(a.properties.message_id->size() == 32);
    CHECK(a.properties.message_id->find_first_not_of("0123456789abcdef") == std::string::npos);
    REQUIRE(a.properties.timestamp);
    CHECK(*a.properties.timestamp >= static_cast<std::uint64_t>(micros(before) / 1000000));
    CHECK(*a.properties.timestamp <= static_cast<std::uint64_t>(micros(after) / 1000000));

    const auto b = get_one(c, q);
    CHECK(written_due(b) >= micros(before + 90s) - 1);
    CHECK(written_due(b) <= micros(after + 90s) + 1);
    CHECK(b.properties.message_id != a.properties.message_id);
    CHECK(b.properties.timestamp);

    const auto now_job = get_one(c, q);
    CHECK(written_due(now_job) >= micros(before) - 1);
    CHECK(written_due(now_job) <= micros(after) + 1);

    const auto d = get_one(c, q);
    CHECK(written_due(d) >= micros(before + 2500ms) - 1);
    CHECK(written_due(d) <= micros(after + 2500ms) + 1);

    // The consumer's reading agrees with what was intended.
    auto r = tarry::contract::read_schedule(a.properties, sys::now(), {});
    REQUIRE(std::holds_alternative<tarry::contract::schedule>(r));
    CHECK(std::get<tarry::contract::schedule>(r).due == at);
    const auto s = pub.stats();
    CHECK(s.published == 4);
    CHECK(s.confirmed == 4);
    CHECK(s.failed + s.nacked + s.returned == 0);
    CHECK_FALSE(pub.last_error().code);
}

TEST_CASE("a message_id and delivery mode the caller set are kept; an earlier perform_job_at is replaced") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    amqp::message m("x");
    m.properties.message_id = "mine";
    m.properties.delivery_mode = 1;
    m.properties.headers = amqp::field_table{{"perform_job_at", std::string("2001-01-01T00:00:00Z")},
                                             {"keep", std::int32_t{7}}};
    const auto at = sys::time_point(std::chrono::seconds(1800000000));
    ok(pub.async_publish("", q, m, tarry::job_schedule::at(at), use_future));
    const auto got = get_one(c, q);
    CHECK(got.properties.message_id == std::optional<std::string>("mine"));
    CHECK(got.properties.delivery_mode == std::optional<std::uint8_t>(1));
    CHECK(written_due(got) == micros(at));
    CHECK(*got.properties.headers->find("keep") == amqp::field_value(std::int32_t{7}));

    tarry::publisher_options transient;
    transient.persistent = false;
    tarry::publisher pub2(c.conn, transient);
    ok(pub2.async_publish("", q, amqp::message("y"), tarry::job_schedule::now(), use_future));
    CHECK_FALSE(get_one(c, q).properties.delivery_mode);
}

TEST_CASE("a delay above max_delay, or an impossible schedule, is an error and nothing is sent") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher_options po;
    po.max_delay = 60s;
    tarry::publisher pub(c.conn, po);
    const auto q = declare_fresh_queue(c, "pub");
    auto publish = [&](tarry::job_schedule when) {
        return wait(pub.async_publish("", q, amqp::message("no"), when, use_future));
    };
    CHECK(publish(tarry::job_schedule::after(61s)) == tarry::publish_errc::delay_exceeds_max);
    CHECK(pub.last_error().code == tarry::publish_errc::delay_exceeds_max);
    CHECK_MESSAGE(pub.last_error().message.find("max_delay (60000 ms)") != std::string::npos,
                  pub.last_error().message);
    CHECK(publish(tarry::job_schedule::after(60001ms)) == tarry::publish_errc::delay_exceeds_max);
    CHECK(publish(tarry::job_schedule::at(sys::now() + 10min)) == tarry::publish_errc::delay_exceeds_max);
    CHECK(publish(tarry::job_schedule::after(std::chrono::hours(24 * 365 * 1000))) ==
          tarry::publish_errc::delay_exceeds_max);
    CHECK(publish(tarry::job_schedule::at(sys::time_point(-1s))) == tarry::publish_errc::invalid_schedule);
    CHECK(publish(tarry::job_schedule::after(
              std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN()))) ==
          tarry::publish_errc::invalid_schedule);
    CHECK(depth(c, q) == 0);
    CHECK(pub.stats().published == 0);
    CHECK(pub.stats().failed == 6);

    // Without a max_delay: beyond the clock's range is invalid, not wrapped.
    tarry::publisher unlimited(c.conn);
    CHECK(wait(unlimited.async_publish("", q, amqp::message("no"),
                                       tarry::job_schedule::after(std::chrono::hours(24 * 365 * 1000)),
                                       use_future)) == tarry::publish_errc::invalid_schedule);
    CHECK(wait(unlimited.async_publish("", q, amqp::message("no"),
                                       tarry::job_schedule::after(std::chrono::hours::max()), use_future)) ==
          tarry::publish_errc::invalid_schedule);
    CHECK(wait(unlimited.async_publish("", q, amqp::message("no"),
                                       tarry::job_schedule::after(std::chrono::hours::min()), use_future)) ==
          tarry::publish_errc::invalid_schedule);
    CHECK(depth(c, q) == 0);

    // At the limit it goes.
    ok(pub.async_publish("", q, amqp::message("ok"), tarry::job_schedule::after(60s), use_future));
    CHECK(depth(c, q) == 1);
}

TEST_CASE("an unroutable publish fails with unroutable; a routable one right after succeeds") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    const auto missing = "no-such-queue-" + q;
    const auto now = tarry::job_schedule::now();
    CHECK(wait(pub.async_publish("", missing, amqp::message("lost"), now, use_future)) ==
          tarry::publish_errc::unroutable);
    CHECK(pub.last_error().code == tarry::publish_errc::unroutable);
    CHECK_MESSAGE(pub.last_error().message.find(missing) != std::string::npos, pub.last_error().message);
    ok(pub.async_publish("", q, amqp::message("found"), now, use_future));
    CHECK(get_one(c, q).body_view() == "found");
    // The same message again, now routable: no stale return is matched.
    amqp::message same("lost");
    same.properties.message_id = "same";
    CHECK(wait(pub.async_publish_as_is("", missing, same, use_future)) == tarry::publish_errc::unroutable);
    ok(pub.async_publish_as_is("", q, same, use_future));
    CHECK(pub.stats().returned == 2);
    CHECK(pub.stats().confirmed == 2);

    tarry::publisher_options not_mandatory;
    not_mandatory.mandatory = false;
    tarry::publisher careless(c.conn, not_mandatory);
    ok(careless.async_publish("", missing, amqp::message("dropped"), now, use_future));
}

TEST_CASE("routable and unroutable publishes in flight at once each get their own result") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    std::vector<std::future<std::error_code>> results;
    std::vector<bool> lost;
    for (int i = 0; i < 60; ++i) {
        // Every third is lost; among them pairs that differ only in where
        // they go, and copies identical to a routed one but for the key.
        lost.push_back(i % 3 == 0);
        amqp::message m(i % 2 == 0 ? "same body" : "m" + std::to_string(i));
        if (i % 5 == 0) m.properties.message_id = "id-" + std::to_string(i % 4);
        const auto key = lost.back() ? "no-such-queue-" + q : q;
        results.push_back(i % 4 == 0 ? pub.async_publish_as_is("", key, std::move(m), use_future)
                                     : pub.async_publish("", key, std::move(m), tarry::job_schedule::now(),
                                                         use_future));
    }
    std::uint32_t routed = 0;
    for (std::size_t i = 0; i < results.size(); ++i) {
        CAPTURE(i);
        const auto ec = wait(std::move(results[i]));
        if (lost[i]) {
            CHECK(ec == tarry::publish_errc::unroutable);
        } else {
            CHECK_FALSE(ec);
            ++routed;
        }
    }
    CHECK(depth(c, q) == routed);
    CHECK(pub.stats().returned == 20);
    CHECK(pub.stats().confirmed == 40);
}

TEST_CASE("each publish's diagnostics say why that publish failed, even with others in flight") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher_options po;
    po.max_delay = 60s;
    tarry::publisher pub(c.conn, po);
    const auto q = declare_fresh_queue(c, "pub");
    const auto missing = "no-such-queue-" + q;
    const amqp::diagnostics stale{amqp::errc::heartbeat_timeout, "stale", std::nullopt};
    amqp::diagnostics late = stale, lost = stale, fine = stale, copied = stale;
    auto f1 = pub.async_publish("", q, amqp::message("late"), tarry::job_schedule::after(61s), late,
                                use_future);
    auto f2 = pub.async_publish("", missing, amqp::message("lost"), tarry::job_schedule::now(), lost,
                                use_future);
    auto f3 = pub.async_publish("", q, amqp::message("fine"), tarry::job_schedule::now(), fine,
                                use_future);
    auto f4 = pub.async_publish_as_is("", q, amqp::message("copy"), copied, use_future);
    CHECK(wait(std::move(f1)) == tarry::publish_errc::delay_exceeds_max);
    CHECK(wait(std::move(f2)) == tarry::publish_errc::unroutable);
    ok(std::move(f3));
    ok(std::move(f4));

    CHECK(late.code == tarry::publish_errc::delay_exceeds_max);
    CHECK_MESSAGE(late.message.find("max_delay (60000 ms)") != std::string::npos, late.message);
    CHECK_FALSE(late.reply);
    CHECK(lost.code == tarry::publish_errc::unroutable);
    CHECK_MESSAGE(lost.message.find(missing) != std::string::npos, lost.message);
    REQUIRE(lost.reply);
    CHECK(lost.reply->code == 312);
    CHECK_FALSE(fine.code);  // cleared on success
    CHECK(fine.message.empty());
    CHECK_FALSE(copied.code);

    // The broker closes the channel: the publish's diagnostics hold its reply.
    const auto no_exchange = "no-such-exchange-" + q;
    amqp::diagnostics gone = stale;
    CHECK(wait(pub.async_publish_as_is(no_exchange, "k", amqp::message("x"), gone, use_future)) ==
          amqp::reply_code::not_found);
    CHECK(gone.code == amqp::reply_code::not_found);
    CHECK_MESSAGE(gone.message.rfind("basic.publish: ", 0) == 0, gone.message);
    REQUIRE(gone.reply);
    CHECK(gone.reply->text.find(no_exchange) != std::string::npos);
    CHECK(pub.last_error().message == gone.message);  // the latest, for logs
}

TEST_CASE("a full queue with reject-publish: the publish fails with publish_nacked") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub", {{"x-max-length", std::int32_t{1}}, {"x-overflow", "reject-publish"}});
    ok(pub.async_publish("", q, amqp::message("1"), tarry::job_schedule::now(), use_future));
    CHECK(wait(pub.async_publish("", q, amqp::message("2"), tarry::job_schedule::now(), use_future)) ==
          amqp::errc::publish_nacked);
    CHECK(wait(pub.async_publish_as_is("", q, amqp::message("3"), use_future)) == amqp::errc::publish_nacked);
    CHECK(pub.stats().nacked == 2);
    CHECK(pub.stats().failed == 0);
    CHECK(pub.last_error().code == amqp::errc::publish_nacked);
    CHECK(depth(c, q) == 1);
}

TEST_CASE("after the broker closes the channel (missing exchange), the next publish opens a new one") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    ok(pub.async_publish_as_is("", q, amqp::message("before"), use_future));
    const auto missing = "no-such-exchange-" + q;
    const auto ec = wait(pub.async_publish_as_is(missing, "k", amqp::message("x"), use_future));
    CHECK(ec == amqp::reply_code::not_found);
    CHECK(pub.last_error().code == amqp::reply_code::not_found);
    CHECK_MESSAGE(pub.last_error().message.find(missing) != std::string::npos, pub.last_error().message);
    ok(pub.async_publish_as_is("", q, amqp::message("y"), use_future));
    CHECK(depth(c, q) == 2);

    // Publishes right behind the doomed one: each fails with the channel or
    // succeeds on a new one, none hangs, and the publisher works afterwards.
    std::vector<std::future<std::error_code>> fs;
    fs.push_back(pub.async_publish_as_is(missing, "k", amqp::message("x"), use_future));
    for (int i = 0; i < 20; ++i) fs.push_back(pub.async_publish_as_is("", q, amqp::message("z"), use_future));
    CHECK(wait(std::move(fs[0])) == amqp::reply_code::not_found);
    for (std::size_t i = 1; i < fs.size(); ++i) {
        const auto e = wait(std::move(fs[i]));
        CHECK((!e || e == amqp::reply_code::not_found || e == amqp::errc::channel_closed));
    }
    ok(pub.async_publish_as_is("", q, amqp::message("after"), use_future));
}

TEST_CASE("fault: the broker stops confirming (a memory alarm): the publish fails with confirm_timeout after "
          "confirm_timeout, and once the alarm clears the next publish is confirmed on a new channel") {
    TARRY_REQUIRE_BROKER(url);  // skipped, like the rest, outside a broker run
    // A private broker: its alarm blocks every connection that publishes.
    tarry_test::private_broker broker;
    connected_client c(broker.url());
    const auto q = declare_fresh_queue(c, "pub");
    tarry::publisher_options po;
    po.confirm_timeout = 1500ms;
    tarry::publisher pub(c.conn, po);
    ok(pub.async_publish_as_is("", q, amqp::message("before"), use_future));
    const auto alarm = broker.ctl({"set_vm_memory_high_watermark", "0.000001"});
    REQUIRE_MESSAGE(alarm.exit_code == 0, alarm.err);
    struct cleared {
        tarry_test::private_broker& b;
        ~cleared() { b.ctl({"set_vm_memory_high_watermark", "0.4"}); }
    } clear_at_exit{broker};
    std::this_thread::sleep_for(500ms);  // the alarm reaches the connection

    amqp::diagnostics diag;
    const auto t0 = std::chrono::steady_clock::now();
    const auto ec = wait(pub.async_publish_as_is("", q, amqp::message("held"), diag, use_future));
    const auto waited = std::chrono::steady_clock::now() - t0;
    CHECK(ec == tarry::publish_errc::confirm_timeout);
    CHECK(waited >= 1400ms);
    CHECK(waited < 15s);
    CHECK_MESSAGE(diag.message.find("1500 ms") != std::string::npos, diag.message);
    CHECK(pub.stats().failed == 1);
    CHECK(pub.last_error().code == tarry::publish_errc::confirm_timeout);

    const auto clear = broker.ctl({"set_vm_memory_high_watermark", "0.4"});
    REQUIRE_MESSAGE(clear.exit_code == 0, clear.err);
    ok(pub.async_publish_as_is("", q, amqp::message("after"), use_future));
    CHECK(pub.stats().confirmed == 2);
    // "held" may have been taken all the same once the alarm cleared (at
    // least once): 2 or 3 messages, never fewer.
    const auto n = depth(c, q);
    CHECK(n >= 2);
    CHECK(n <= 3);
}

TEST_CASE("after the connection is cut and rebuilt, the next publish opens a new channel") {
    TARRY_REQUIRE_BROKER(url);
    auto direct = config_of(url);
    tarry_test::tcp_relay relay(direct.host, direct.effective_port());
    auto cfg = direct;
    cfg.port = relay.port();
    cfg.reconnect_backoff = tarry::retry::backoff_policy::exponential(50ms, 2.0, 1s);
    client cut(cfg);
    cut.connect();
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "pub");
    tarry::publisher pub(cut.conn);
    ok(pub.async_publish_as_is("", q, amqp::message("1"), use_future));

    relay.cut_all();
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while (cut.conn.usage().connects < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    REQUIRE(cut.conn.usage().connects == 2);
    ok(pub.async_publish_as_is("", q, amqp::message("2"), use_future));
    CHECK(depth(c, q) == 2);
}

TEST_CASE("four threads publishing at once, from before the channel is open: one channel, all confirmed") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "pub");
    connected_client own(url);  // the publisher's connection: no other channel on it
    tarry::publisher pub(own.conn);
    const auto in_a_second = tarry::job_schedule::after(1s);
    std::latch go(4);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            std::vector<std::future<std::error_code>> fs;
            go.arrive_and_wait();
            for (int i = 0; i < 250; ++i) {
                amqp::message m("t" + std::to_string(t) + "-" + std::to_string(i));
                if (i % 2) {
                    fs.push_back(pub.async_publish("", q, std::move(m), in_a_second, use_future));
                } else {
                    fs.push_back(pub.async_publish_as_is("", q, std::move(m), use_future));
                }
            }
            for (auto& f : fs)
                if (wait(std::move(f))) ++failures;
        });
    }
    for (auto& th : threads) th.join();
    CHECK(failures == 0);
    CHECK(depth(c, q) == 1000);
    CHECK(pub.stats().confirmed == 1000);
    // Channel 1 is the publisher's: the next one opened is number 2.
    CHECK(own.open_channel().number() == 2);
}

TEST_CASE("async_publish_as_is keeps every property and the body byte for byte "
          "(RabbitMQ 4 hands the header table back sorted by name)") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    amqp::basic_properties p = all_properties();
    p.headers->set("perform_job_at", 1767225600.25);
    p.headers->set("x-tarry-attempt", std::int32_t{3});
    p.delivery_mode = 1;
    const amqp::message sent(p, {0, 1, 2, 0xfe, 0xff, 'x'});
    ok(pub.async_publish_as_is("", q, sent, use_future));
    const auto got = get_one(c, q);
    const auto delivered = as_delivered(sent.properties, broker_major(c));
    CHECK(got.properties == delivered);
    CHECK(encoded(got.properties) == encoded(delivered));
    CHECK(got.body == sent.body);

    // Nothing added to a bare message either.
    ok(pub.async_publish_as_is("", q, amqp::message("bare"), use_future));
    const auto bare = get_one(c, q);
    CHECK(bare.properties == amqp::basic_properties{});
}

TEST_CASE("a publisher destroyed with publishes in flight: they complete, then its channel is closed") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = declare_fresh_queue(c, "pub");
    connected_client own(url);
    std::vector<std::future<std::error_code>> fs;
    // The I/O thread is held until the publisher is gone, so none of its
    // work has run yet: its channel opens after its destruction.
    std::promise<void> release;
    boost::asio::post(own.conn.get_executor(), [held = release.get_future().share()] { held.wait(); });
    {
        tarry::publisher pub(own.conn);
        for (int i = 0; i < 100; ++i) {
            fs.push_back(pub.async_publish_as_is("", q, amqp::message("m"), use_future));
        }
        const auto later = tarry::job_schedule::after(1s);
        fs.push_back(pub.async_publish("", q, amqp::message("s"), later, use_future));
    }  // (its destructor does not wait for the I/O thread)
    release.set_value();
    for (auto& f : fs) ok(std::move(f));
    CHECK(depth(c, q) == 101);
    // Channel 1 (the publisher's) is given back: a new channel gets it again.
    std::uint16_t n = 0;
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
        auto ch = own.open_channel();
        n = ch.number();
        ok(ch.async_close(use_future));
        if (n == 1) break;
        std::this_thread::sleep_for(10ms);
    }
    CHECK(n == 1);
}

TEST_CASE("callbacks: the handler runs once, off the calling thread, with the result") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    tarry::publisher pub(c.conn);
    const auto q = declare_fresh_queue(c, "pub");
    std::promise<std::pair<std::error_code, std::thread::id>> done;
    std::atomic<int> calls{0};
    pub.async_publish("", q, amqp::message("cb"), tarry::job_schedule::after(5s), [&](std::error_code ec) {
        if (++calls == 1) done.set_value({ec, std::this_thread::get_id()});
    });
    const auto [ec, where] = wait(done.get_future());
    CHECK_FALSE(ec);
    CHECK(where != std::this_thread::get_id());
    std::this_thread::sleep_for(50ms);
    CHECK(calls == 1);
}
