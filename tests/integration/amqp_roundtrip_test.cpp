// Publish/consume round trips against the real broker: bodies of 0, 1,
// 128 KiB and 10 MiB (multi-frame), all 14 properties, headers of every
// field type; basic.get; the three completion-token styles.
#include "amqp_client.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/use_awaitable.hpp>

using namespace amqp_it;

namespace {

std::vector<std::uint8_t> pattern(std::size_t n) {
    std::vector<std::uint8_t> b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 131) ^ (i >> 8));
    return b;
}

}  // namespace

TEST_CASE("publish and consume bodies of 0 B, 1 B, 128 KiB and 10 MiB with every property") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("roundtrip");
    auto info = value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));
    CHECK(info.name == q);
    ok(ch.async_confirm_select(use_future));

    inbox in;
    auto consumer_ch = c.open_channel();
    const auto tag = in.subscribe(consumer_ch, q);
    CHECK_FALSE(tag.empty());

    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{128 * 1024},
                             std::size_t{10 * 1024 * 1024}}) {
        CAPTURE(size);
        amqp::message m(all_properties(), pattern(size));
        ok(ch.async_publish("", q, m, {}, use_future), 60s);
        auto d = in.next(60s);
        REQUIRE(d);
        CHECK(d->consumer_tag == tag);
        CHECK(d->routing_key == q);
        CHECK(d->exchange == "");
        CHECK_FALSE(d->redelivered);
        CHECK(d->msg.body.size() == size);
        CHECK(d->msg.body == m.body);
        CHECK(d->msg.properties == m.properties);
        ok(consumer_ch.async_ack(d->delivery_tag, false, use_future));
    }
    ok(consumer_ch.async_cancel(tag, use_future));
    CHECK(value_of(ch.async_delete_queue(q, {}, use_future)) == 0);
}

TEST_CASE("basic.get returns the message or nothing; reject, nack and recover") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("get");
    value_of(ch.async_declare_queue(queue_opts(q, true), use_future));
    CHECK_FALSE(value_of(ch.async_get(q, false, use_future)).has_value());

    for (const char* text : {"a", "b", "c"}) {
        ok(ch.async_publish("", q, amqp::message(text), {}, use_future));
    }
    auto first = value_of(ch.async_get(q, false, use_future));
    REQUIRE(first);
    CHECK(first->item.msg.body_view() == "a");
    CHECK(first->message_count == 2);
    ok(ch.async_reject(first->item.delivery_tag, true, use_future));  // back to the queue
    auto again = value_of(ch.async_get(q, false, use_future));
    REQUIRE(again);
    CHECK(again->item.redelivered);
    auto second = value_of(ch.async_get(q, false, use_future));
    REQUIRE(second);
    ok(ch.async_nack(second->item.delivery_tag, true, true, use_future));  // both back
    ok(ch.async_recover(true, use_future));
    auto t1 = value_of(ch.async_get(q, false, use_future));
    auto t2 = value_of(ch.async_get(q, false, use_future));
    auto t3 = value_of(ch.async_get(q, false, use_future));
    REQUIRE(t1);
    REQUIRE(t2);
    REQUIRE(t3);
    ok(ch.async_ack(t3->item.delivery_tag, true, use_future));
    CHECK(value_of(ch.async_purge_queue(q, use_future)) == 0);
    CHECK_FALSE(value_of(ch.async_get(q, true, use_future)).has_value());
}

TEST_CASE("exchanges, bindings with argument tables, qos, flow, purge, delete") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto src = unique_name("src"), dst = unique_name("dst"), q = unique_name("bound");
    ok(ch.async_declare_exchange(exchange_opts(src, "topic"), use_future));
    ok(ch.async_declare_exchange(exchange_opts(dst, "headers", {{"alternate-exchange", "amq.fanout"}}),
                                 use_future));
    ok(ch.async_bind_exchange(dst, src, "jobs.#", {}, use_future));
    value_of(ch.async_declare_queue(queue_opts(q, true, false,
                                               {{"x-message-ttl", std::int32_t{60000}},
                                                {"x-max-length", std::int64_t{100}}}),
                                    use_future));
    ok(ch.async_bind_queue(q, dst, "", {{"x-match", "any"}, {"kind", "email"}}, use_future));
    ok(ch.async_qos(prefetch(10), use_future));
    CHECK(value_of(ch.async_flow(true, use_future)));

    amqp::basic_properties p;
    p.headers = amqp::field_table{{"kind", "email"}};
    ok(ch.async_publish(src, "jobs.mail", amqp::message("hi", p), {}, use_future));
    ok(ch.async_publish(src, "other", amqp::message("no"), {}, use_future));
    std::optional<amqp::get_result> got;
    for (int i = 0; i < 50 && !got; ++i) {
        got = value_of(ch.async_get(q, true, use_future));
        if (!got) std::this_thread::sleep_for(20ms);
    }
    REQUIRE(got);
    CHECK(got->item.msg.body_view() == "hi");
    CHECK(got->item.exchange == src);

    ok(ch.async_unbind_queue(q, dst, "", {{"x-match", "any"}, {"kind", "email"}}, use_future));
    ok(ch.async_unbind_exchange(dst, src, "jobs.#", {}, use_future));
    CHECK(value_of(ch.async_purge_queue(q, use_future)) == 0);
    CHECK(value_of(ch.async_delete_queue(q, amqp::queue_delete_options{true, true}, use_future)) == 0);
    ok(ch.async_delete_exchange(dst, false, use_future));
    ok(ch.async_delete_exchange(src, true, use_future));
    ok(ch.async_close(use_future));
    CHECK_FALSE(ch.is_open());
    CHECK(wait(ch.async_qos(prefetch(1), use_future)) == amqp::errc::channel_closed);
}

TEST_CASE("completion tokens: callbacks, use_future and use_awaitable") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);

    // Callback: runs on the I/O thread, never inside the starting call.
    std::promise<std::pair<std::error_code, bool>> p;
    const auto caller = std::this_thread::get_id();
    bool returned = false;
    c.conn.async_open_channel([&](std::error_code ec, amqp::channel ch) {
        p.set_value({ec, std::this_thread::get_id() != caller && ch.is_open()});
    });
    returned = true;
    auto [ec, on_io_thread] = wait(p.get_future());
    CHECK(returned);
    CHECK_FALSE(ec);
    CHECK(on_io_thread);

    // use_awaitable: a coroutine on the I/O thread's context.
    std::promise<std::string> result;
    const auto q = unique_name("awaitable");
    boost::asio::co_spawn(
        c.io.context(),
        [&]() -> boost::asio::awaitable<void> {
            auto [ec1, ch] = co_await c.conn.async_open_channel(boost::asio::use_awaitable);
            if (ec1) {
                result.set_value("open: " + ec1.message());
                co_return;
            }
            auto [ec2, info] = co_await ch.async_declare_queue(queue_opts(q, true),
                                                               boost::asio::use_awaitable);
            auto ec3 = co_await ch.async_publish("", q, amqp::message("co"), {},
                                                 boost::asio::use_awaitable);
            auto [ec4, got] = co_await ch.async_get(q, true, boost::asio::use_awaitable);
            result.set_value(ec2 || ec3 || ec4 || !got ? std::string("failed")
                                                       : std::string(got->item.msg.body_view()));
        },
        boost::asio::detached);
    CHECK(wait(result.get_future()) == "co");
}

TEST_CASE("many channels on one connection, used from many threads") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = unique_name("threads");
    auto setup = c.open_channel();
    value_of(setup.async_declare_queue(queue_opts(q, true), use_future));
    constexpr int threads = 4, per_thread = 250;
    std::vector<std::thread> workers;
    std::atomic<int> failures{0};
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&] {
            auto [ec, ch] = c.conn.async_open_channel(use_future).get();
            if (ec) {
                ++failures;
                return;
            }
            if (ch.async_confirm_select(use_future).get()) ++failures;
            std::vector<std::future<std::error_code>> pending;
            for (int i = 0; i < per_thread; ++i) {
                pending.push_back(ch.async_publish("", q, amqp::message("x"), {}, use_future));
            }
            for (auto& f : pending) {
                if (f.wait_for(30s) != std::future_status::ready || f.get()) ++failures;
            }
        });
    }
    for (auto& w : workers) w.join();
    CHECK(failures == 0);
    auto info = value_of(setup.async_declare_queue(passive_queue(q), use_future));
    CHECK(info.message_count == threads * per_thread);
}
