// The `diagnostics&` overloads, without a broker: the handler that carries
// an operation's diagnostics (op_handler), the token adapter behind the
// overloads with several kinds of token, and the operations that fail
// before reaching a broker (a channel handle to nothing, a connection that
// was never connected).
#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/completion.hpp"
#include "tarry/amqp/connection.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_future.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <ostream>  // doctest prints std::error_code with it

namespace asio = boost::asio;
namespace amqp = tarry::amqp;
using amqp::detail::op_handler;

namespace {

/// Something that is not what any operation writes.
amqp::diagnostics stale() {
    return {amqp::errc::heartbeat_timeout, "stale", amqp::broker_reply{320, "old", 0, 0}};
}

/// The future's value, failing the test (not hanging) after 10 s.
template <class T>
T wait(std::future<T>& f) {
    REQUIRE(f.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    return f.get();
}

amqp::queue_options queue(std::string name) {
    amqp::queue_options o;
    o.name = std::move(name);
    o.passive = true;
    return o;
}

}  // namespace

TEST_CASE("op_handler: the diagnostics are written before the handler runs, on its executor") {
    asio::io_context io;
    auto strand = asio::make_strand(io);
    amqp::diagnostics diag = stale();
    bool ran = false;
    op_handler<int> h(asio::bind_executor(strand,
                                          [&](std::error_code ec, int v) {
                                              CHECK(strand.running_in_this_thread());
                                              CHECK(ec == amqp::reply_code::not_found);
                                              CHECK(diag.code == ec);
                                              CHECK(diag.message == "queue.declare: gone");
                                              REQUIRE(diag.reply);
                                              CHECK(diag.reply->code == 404);
                                              CHECK(v == 7);
                                              ran = true;
                                          }),
                      &diag);
    std::move(h).complete(io.get_executor(),
                          {amqp::reply_code::not_found, "queue.declare: gone",
                           amqp::broker_reply{404, "NOT_FOUND", 50, 10}},
                          7);
    CHECK_FALSE(ran);  // not inline: the strand was not running here
    io.run();
    CHECK(ran);

    SUBCASE("success clears them") {
        amqp::diagnostics cleared = stale();
        std::error_code got = amqp::errc::protocol_error;
        op_handler<> ok([&](std::error_code ec) { got = ec; }, &cleared);
        std::move(ok).complete(asio::system_executor(), amqp::diagnostics{});  // inline
        CHECK_FALSE(got);
        CHECK_FALSE(cleared.code);
        CHECK(cleared.message.empty());
        CHECK_FALSE(cleared.reply);
    }
    SUBCASE("without a sink only the code reaches the handler") {
        std::error_code got;
        op_handler<> plain([&](std::error_code ec) { got = ec; });
        std::move(plain).complete(asio::system_executor(),
                                  amqp::diagnostics::from(amqp::errc::channel_closed));
        CHECK(got == amqp::errc::channel_closed);
    }
}

TEST_CASE("op_handler keeps the caller's cancellation slot") {
    asio::cancellation_signal signal;
    op_handler<> h(asio::bind_cancellation_slot(signal.slot(), [](std::error_code) {}));
    auto slot = asio::get_associated_cancellation_slot(h);
    REQUIRE(slot.is_connected());
    bool cancelled = false;
    slot.assign([&](asio::cancellation_type) { cancelled = true; });
    signal.emit(asio::cancellation_type::terminal);
    CHECK(cancelled);  // the caller's signal reaches whoever listens on the operation's slot
    const op_handler<> plain([](std::error_code) {});
    CHECK_FALSE(asio::get_associated_cancellation_slot(plain).is_connected());
}

TEST_CASE("a channel handle to nothing: each operation names itself in its diagnostics") {
    const amqp::channel none;
    // The handlers run on the system executor's threads: wait on futures.
    amqp::diagnostics declare = stale();
    auto declare_done = none.async_declare_queue(queue("jobs"), declare, asio::use_future);
    amqp::diagnostics qos = stale();
    auto qos_done = none.async_qos({}, qos, asio::use_future);
    amqp::diagnostics publish = stale();
    auto publish_op = none.async_publish("", "k", amqp::message("m"), {}, publish, asio::deferred);
    auto publish_done = std::move(publish_op)(asio::use_future);
    amqp::diagnostics close = stale();
    auto close_done = none.async_close(close, asio::use_future);

    CHECK(std::get<0>(wait(declare_done)) == amqp::errc::channel_closed);
    CHECK(declare.code == amqp::errc::channel_closed);
    CHECK(declare.message == "queue.declare: no channel");
    CHECK_FALSE(declare.reply);
    CHECK(wait(qos_done) == amqp::errc::channel_closed);
    CHECK(qos.message == "basic.qos: no channel");
    CHECK(wait(publish_done) == amqp::errc::channel_closed);
    CHECK(publish.message == "basic.publish: no channel");
    CHECK_FALSE(wait(close_done));  // nothing to close
    CHECK_FALSE(close.code);
    CHECK(close.message.empty());
    CHECK_FALSE(close.reply);
}

TEST_CASE("a connection never connected: open_channel and wait_unblocked say so; close succeeds") {
    asio::io_context io;
    amqp::connection conn(io.get_executor(), amqp::connection_config{});

    amqp::diagnostics open = stale();
    std::error_code open_ec;
    conn.async_open_channel(open, [&](std::error_code ec, amqp::channel ch) {
        open_ec = ec;
        CHECK_FALSE(ch.is_open());
    });
    amqp::diagnostics unblocked = stale();
    auto unblocked_done = conn.async_wait_unblocked(unblocked, asio::use_future);
    amqp::diagnostics close = stale();
    std::error_code close_ec = amqp::errc::protocol_error;
    conn.async_close(close, [&](std::error_code ec) { close_ec = ec; });
    io.run();

    CHECK(open_ec == amqp::errc::not_connected);
    CHECK(open.code == amqp::errc::not_connected);
    CHECK(open.message == "channel.open: the connection is not open");
    CHECK(wait(unblocked_done) == amqp::errc::not_connected);
    CHECK(unblocked.message == "wait for unblocked: the connection is not open");
    CHECK_FALSE(close_ec);
    CHECK_FALSE(close.code);
    CHECK_FALSE(close.reply);
}
