// Publisher confirms (acks, broker-forced nacks), mandatory returns, the
// broker's consumer cancel notification, per-operation cancellation.
#include "amqp_client.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

using namespace amqp_it;

TEST_CASE("confirms: acks for routed publishes, nacks forced by reject-publish overflow") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("overflow");
    value_of(ch.async_declare_queue(
        queue_opts(q, true, false,
                   {{"x-max-length", std::int32_t{2}}, {"x-overflow", "reject-publish"}}),
        use_future));
    ok(ch.async_confirm_select(use_future));
    std::vector<std::future<std::error_code>> results;
    for (int i = 0; i < 5; ++i) {
        results.push_back(ch.async_publish("", q, amqp::message("m" + std::to_string(i)), {}, use_future));
    }
    std::vector<std::error_code> codes;
    for (auto& f : results) codes.push_back(wait(std::move(f)));
    CHECK_FALSE(codes[0]);
    CHECK_FALSE(codes[1]);
    for (int i = 2; i < 5; ++i) {
        CAPTURE(i);
        CHECK(codes[static_cast<std::size_t>(i)] == amqp::errc::publish_nacked);
    }
    CHECK(ch.unconfirmed() == 0);
    CHECK(ch.is_open());  // a nack does not close the channel
    CHECK(value_of(ch.async_declare_queue(passive_queue(q), use_future)).message_count == 2);
}

TEST_CASE("mandatory unroutable publish: basic.return reaches the return handler, then the ack") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    std::promise<amqp::returned_message> returned;
    ch.set_return_handler([&](amqp::returned_message r) { returned.set_value(std::move(r)); });
    ok(ch.async_confirm_select(use_future));
    const auto key = unique_name("nowhere");
    amqp::basic_properties p;
    p.message_id = "lost-1";
    amqp::publish_options mandatory;
    mandatory.mandatory = true;
    ok(ch.async_publish("", key, amqp::message("unroutable", p), mandatory, use_future));
    auto r = wait(returned.get_future());
    CHECK(r.reply.code == 312);
    CHECK(r.reply.text == "NO_ROUTE");
    CHECK(r.routing_key == key);
    CHECK(r.msg.body_view() == "unroutable");
    CHECK(r.msg.properties.message_id == "lost-1");
}

TEST_CASE("the broker cancels a consumer whose queue is deleted") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto consumer = c.open_channel();
    auto admin = c.open_channel();
    const auto q = unique_name("cancelled");
    value_of(admin.async_declare_queue(queue_opts(q), use_future));
    inbox in;
    in.subscribe(consumer, q);
    value_of(admin.async_delete_queue(q, {}, use_future));
    CHECK(in.wait_cancelled() == amqp::errc::consumer_cancelled);
    CHECK(consumer.is_open());
    ok(consumer.async_qos(prefetch(5), use_future));
}

TEST_CASE("per-operation cancellation completes the operation at once; the channel keeps working") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("cancel-op");
    boost::asio::cancellation_signal signal;
    std::promise<std::error_code> result;
    // Start and cancel on the I/O thread, as Asio's cancellation requires.
    boost::asio::post(c.io.context(), [&] {
        ch.async_declare_queue(queue_opts(q, true),
                               boost::asio::bind_cancellation_slot(
                                   signal.slot(), [&](std::error_code ec, amqp::queue_info) {
                                       result.set_value(ec);
                                   }));
        boost::asio::post(c.io.context(), [&] { signal.emit(boost::asio::cancellation_type::terminal); });
    });
    CHECK(wait(result.get_future()) == amqp::errc::operation_cancelled);
    // The broker's late reply is dropped; the channel still works in order.
    auto info = value_of(ch.async_declare_queue(queue_opts(q, true), use_future));
    CHECK(info.name == q);
}
