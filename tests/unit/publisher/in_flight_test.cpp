// The publisher's table of unconfirmed publishes (lib/publisher/in_flight):
// returns matched to their publish, and the confirm deadline — a channel
// whose oldest publish waited past it is given up, every publish on it
// failing, so a broker that stopped confirming on one channel (RabbitMQ
// 3.10: a stream's publishes after its leader moved in a partition) is not
// waited on for ever. A fake clock; no broker.
#include "in_flight.hpp"

#include "tarry/publisher/publish_error.hpp"

#include <doctest/doctest.h>

#include <boost/asio/io_context.hpp>

#include <vector>

using namespace std::chrono_literals;
using tarry::detail::in_flight;
using steady = std::chrono::steady_clock;

namespace {

tarry::amqp::message named(const std::string& id) {
    tarry::amqp::message m("body");
    m.properties.message_id = id;
    return m;
}

/// A done handler that records what it was completed with.
struct recorder {
    boost::asio::io_context io;
    std::vector<std::pair<int, std::error_code>> done;
    in_flight::done_handler make(int n) {
        return [this, n](std::error_code ec) { done.emplace_back(n, ec); };
    }
    void complete(in_flight::done_handler h, std::error_code ec) {
        std::move(h).complete(io.get_executor(), tarry::amqp::diagnostics::from(ec, "test"));
        io.poll();
        io.restart();
    }
};

}  // namespace

TEST_CASE("a landed publish hands back its handler once, with the return matched to it") {
    recorder r;
    in_flight f;
    const auto t0 = steady::time_point{} + 1h;
    const auto a = f.add(1, "", "q", named("a"), r.make(1), t0);
    const auto b = f.add(1, "", "q", named("b"), r.make(2), t0);
    CHECK(f.match_return(1, "", "q", named("b"), tarry::amqp::diagnostics::from(tarry::amqp::errc::publish_nacked, "r")));
    auto lb = f.land(b);
    REQUIRE(lb);
    REQUIRE(lb->returned);
    CHECK(lb->returned->code == tarry::amqp::errc::publish_nacked);
    auto la = f.land(a);
    REQUIRE(la);
    CHECK_FALSE(la->returned);
    CHECK_FALSE(f.land(a));  // once
    CHECK(f.empty());
    r.complete(std::move(la->done), {});
    CHECK(r.done.size() == 1);
}

TEST_CASE("fault: a channel that stops confirming: its oldest publish is overdue at sent + timeout, not before") {
    recorder r;
    in_flight f;
    const auto t0 = steady::time_point{} + 1h;
    CHECK_FALSE(f.next_deadline(5s));
    f.add(1, "", "q", named("a"), r.make(1), t0);
    f.add(1, "", "q", named("b"), r.make(2), t0 + 2s);
    CHECK(f.next_deadline(5s) == t0 + 5s);
    CHECK_FALSE(f.overdue_channel(t0 + 5s - 1ms, 5s));
    REQUIRE(f.overdue_channel(t0 + 5s, 5s));
    CHECK(*f.overdue_channel(t0 + 5s, 5s) == 1);
}

TEST_CASE("fault: giving up on a channel fails every publish on it, in order, and leaves the others") {
    recorder r;
    in_flight f;
    const auto t0 = steady::time_point{} + 1h;
    const auto a = f.add(1, "", "q", named("a"), r.make(1), t0);
    f.add(1, "", "q", named("b"), r.make(2), t0 + 1s);
    const auto c = f.add(2, "", "q", named("c"), r.make(3), t0 + 2s);
    auto given_up = f.give_up(1);
    REQUIRE(given_up.size() == 2);
    CHECK(f.size() == 1);
    CHECK_FALSE(f.land(a));  // its confirm, should it come after all, finds nothing
    for (auto& h : given_up) r.complete(std::move(*h), tarry::publish_errc::confirm_timeout);
    REQUIRE(r.done.size() == 2);
    CHECK(r.done[0].first == 1);
    CHECK(r.done[1].first == 2);
    CHECK(r.done[0].second == tarry::publish_errc::confirm_timeout);
    // The deadline now follows channel 2's publish.
    CHECK(f.next_deadline(5s) == t0 + 7s);
    CHECK(f.land(c));
    CHECK(f.empty());
}
