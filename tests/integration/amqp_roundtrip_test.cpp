// Publish/consume round trips against the real broker: bodies of 0, 1,
// 128 KiB and 10 MiB (multi-frame), all 14 properties, headers of every
// field type; basic.get; the defaults of the settlement and delete options;
// the three completion-token styles.
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

TEST_CASE("publish and consume bodies of 0 B, 1 B, 128 KiB and 10 MiB with every property "
          "(RabbitMQ 4 hands the header table back sorted by name)") {
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
        CHECK(d->msg.properties == as_delivered(m.properties, broker_major(c)));
        ok(consumer_ch.async_ack(d->delivery_tag, {}, use_future));
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
    CHECK_FALSE(value_of(ch.async_get(q, {}, use_future)).has_value());

    for (const char* text : {"a", "b", "c"}) {
        ok(ch.async_publish("", q, amqp::message(text), {}, use_future));
    }
    auto first = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(first);
    CHECK(first->item.msg.body_view() == "a");
    CHECK(first->message_count == 2);
    ok(ch.async_reject(first->item.delivery_tag, {.requeue = true}, use_future));  // back to the queue
    auto again = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(again);
    CHECK(again->item.redelivered);
    auto second = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(second);
    // Both back to the queue.
    ok(ch.async_nack(second->item.delivery_tag, {.multiple = true, .requeue = true}, use_future));
    ok(ch.async_recover({.requeue = true}, use_future));
    auto t1 = value_of(ch.async_get(q, {}, use_future));
    auto t2 = value_of(ch.async_get(q, {}, use_future));
    auto t3 = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(t1);
    REQUIRE(t2);
    REQUIRE(t3);
    ok(ch.async_ack(t3->item.delivery_tag, {.multiple = true}, use_future));
    CHECK(value_of(ch.async_purge_queue(q, use_future)) == 0);
    CHECK_FALSE(value_of(ch.async_get(q, {.no_ack = true}, use_future)).has_value());
}

// Each default of the settlement options, checked against what the other
// value would do: get {} leaves a message unacknowledged; ack {} and nack {}
// settle one tag, not every earlier one; nack {} and reject {} give the
// message back to its queue; recover {} requeues.
TEST_CASE("settlement options: the defaults settle one message and give it back") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("defaults");
    value_of(ch.async_declare_queue(queue_opts(q, true), use_future));
    for (const char* text : {"a", "b"}) ok(ch.async_publish("", q, amqp::message(text), {}, use_future));
    auto a = value_of(ch.async_get(q, {}, use_future));
    auto b = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(a);
    REQUIRE(b);

    // "b" alone goes back ("a" would come first, and be counted).
    ok(ch.async_nack(b->item.delivery_tag, {}, use_future));
    auto b2 = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(b2);
    CHECK(b2->item.msg.body_view() == "b");
    CHECK(b2->item.redelivered);
    CHECK(b2->message_count == 0);

    ok(ch.async_reject(b2->item.delivery_tag, {}, use_future));
    auto b3 = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(b3);
    CHECK(b3->item.msg.body_view() == "b");

    // "b" alone is acked: "a", still unacknowledged, is what recover requeues.
    ok(ch.async_ack(b3->item.delivery_tag, {}, use_future));
    ok(ch.async_recover({}, use_future));
    auto a2 = value_of(ch.async_get(q, {}, use_future));
    REQUIRE(a2);
    CHECK(a2->item.msg.body_view() == "a");
    CHECK(a2->item.redelivered);
    CHECK(a2->message_count == 0);

    // The queue has no dead-letter exchange: requeue = false drops it.
    ok(ch.async_nack(a2->item.delivery_tag, {.requeue = false}, use_future));
    CHECK_FALSE(value_of(ch.async_get(q, {}, use_future)).has_value());
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
        got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
        if (!got) std::this_thread::sleep_for(20ms);
    }
    REQUIRE(got);
    CHECK(got->item.msg.body_view() == "hi");
    CHECK(got->item.exchange == src);

    ok(ch.async_unbind_queue(q, dst, "", {{"x-match", "any"}, {"kind", "email"}}, use_future));
    ok(ch.async_unbind_exchange(dst, src, "jobs.#", {}, use_future));
    CHECK(value_of(ch.async_purge_queue(q, use_future)) == 0);
    CHECK(value_of(ch.async_delete_queue(q, {.if_unused = true, .if_empty = true}, use_future)) == 0);
    ok(ch.async_delete_exchange(dst, {}, use_future));
    ok(ch.async_delete_exchange(src, {.if_unused = true}, use_future));
    ok(ch.async_close(use_future));
    CHECK_FALSE(ch.is_open());
    CHECK(wait(ch.async_qos(prefetch(1), use_future)) == amqp::errc::channel_closed);
}

// exchange.delete: {} deletes an exchange that is still bound;
// {.if_unused = true} refuses (406, which closes the channel).
TEST_CASE("exchange delete options: the default deletes a bound exchange") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto x = unique_name("bound-x"), q = unique_name("bound-q");
    ok(ch.async_declare_exchange(exchange_opts(x, "direct"), use_future));
    value_of(ch.async_declare_queue(queue_opts(q, true), use_future));
    ok(ch.async_bind_queue(q, x, "k", {}, use_future));
    CHECK(wait(ch.async_delete_exchange(x, {.if_unused = true}, use_future)) ==
          amqp::reply_code::precondition_failed);

    auto again = c.open_channel();
    ok(again.async_delete_exchange(x, {}, use_future));
    amqp::exchange_options passive;
    passive.name = x;
    passive.passive = true;
    CHECK(wait(again.async_declare_exchange(passive, use_future)) == amqp::reply_code::not_found);
}

// g++ 12 warns, wrongly, that Asio's coroutine frame is freed by another
// function than allocated it (as in lib/consumer/control_reader.cpp).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
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
            auto [ec4, got] = co_await ch.async_get(q, {.no_ack = true}, boost::asio::use_awaitable);
            result.set_value(ec2 || ec3 || ec4 || !got ? std::string("failed")
                                                       : std::string(got->item.msg.body_view()));
        },
        boost::asio::detached);
    CHECK(wait(result.get_future()) == "co");
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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
