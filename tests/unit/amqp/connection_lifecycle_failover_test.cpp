// The connection's life over several broker addresses (host:port, then
// connection_config::failover): the first connect tries each in order,
// reconnects go round-robin from the address after the one lost, and a
// refused attempt moves on to the next address at once until every address
// was tried in that round. Time is stepped by hand; no jitter.
#include "lifecycle_script.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace std::chrono_literals;
using namespace lifecycle_test;

namespace {

/// exact(), over the addresses a (host), b and c (failover).
amqp::connection_config cluster() {
    auto c = exact();
    c.host = "a";
    c.failover = {{"b", 0}, {"c", 5673}};
    return c;
}

/// A cluster() script connected to `a`.
script open_on_a(const amqp::connection_config& c = cluster()) {
    script t(c);
    REQUIRE(t.connect() == "start_attempt a");
    REQUIRE(t.opened() == "complete_connects ok, on_open");
    return t;
}

std::string refused_pause(unsigned attempt, const char* pause) {
    return "on_reconnect_scheduled " + std::to_string(attempt) + " " + pause +
           " connect_failed: Connection refused";
}

}  // namespace

TEST_CASE("addresses(): host:port first, then the failover addresses in order, ports made "
          "effective") {
    const amqp::connection_config plain;
    const auto one = plain.addresses();
    REQUIRE(one.size() == 1);
    CHECK(one[0].host == "localhost");
    CHECK(one[0].port == 5672);

    auto c = cluster();
    c.tls = true;
    const auto all = c.addresses();
    REQUIRE(all.size() == 3);
    CHECK(all[0].host == "a");
    CHECK(all[0].port == 5671);
    CHECK(all[1].host == "b");
    CHECK(all[1].port == 5671);  // 0: the scheme's default
    CHECK(all[2].host == "c");
    CHECK(all[2].port == 5673);
}

// ---- the caller's connect ---------------------------------------------------------

TEST_CASE("first connect: a failed address is followed at once by the next, in order") {
    script t(cluster());
    CHECK(t.connect() == "start_attempt a");
    CHECK(t.refused() == "count_failed_attempt, start_attempt b");
    CHECK(t.state() == "connecting");
    CHECK(t.connect().empty());  // a second caller waits for the same connect
    CHECK(t.failed("timed out") == "count_failed_attempt, start_attempt c");
    CHECK(t.state() == "connecting");
    CHECK(t.opened() == "complete_connects ok, on_open");
    CHECK(t.state() == "open");
}

TEST_CASE("first connect: every address failed, each once: the last failure, and how many were "
          "tried") {
    script t(cluster());
    t.connect();
    t.refused();
    t.failed("cannot resolve 'b'");
    const std::string why =
        "connect_failed: c timed out (all 3 addresses tried; this was the last)";
    CHECK(t.failed("c timed out") == "count_failed_attempt, set_last_error " + why +
                                         ", complete_connects connect_failed, on_closed " + why);
    CHECK(t.state() == "closed");
    CHECK(t.timer().empty());  // never retried

    SUBCASE("the last failure's code and broker reply reach the connect waiters") {
        script r(cluster());
        r.connect();
        r.refused();
        r.refused();
        const amqp::broker_reply no{403, "ACCESS_REFUSED - Login was refused", 10, 11};
        r.feed(in::ended{{errc::authentication_failed, "refused by c", no}, false, r.now});
        const auto* done = std::get_if<act::complete_connects>(&r.last.at(2));
        REQUIRE(done);
        CHECK(done->why.code == errc::authentication_failed);
        CHECK(done->why.message == "refused by c (all 3 addresses tried; this was the last)");
        REQUIRE(done->why.reply);
        CHECK(*done->why.reply == no);
    }
}

TEST_CASE("a new connect after the end starts from the first address again") {
    script t(cluster());
    t.connect();
    t.refused();
    t.refused();
    t.refused();
    REQUIRE(t.state() == "closed");
    CHECK(t.connect() == "start_attempt a");
    CHECK(t.refused() == "count_failed_attempt, start_attempt b");
}

TEST_CASE("close while the first connect falls through: the attempt is abandoned, no other "
          "address tried") {
    script t(cluster());
    t.connect();
    t.refused();
    CHECK(t.close() == "close_session");
    CHECK(t.state() == "aborting");
    CHECK(t.ended(errc::connection_closed, "closed by the client while connecting", true) ==
          "complete_closes, complete_connects connection_closed, "
          "on_closed connection_closed: closed by the client while connecting, release_hooks");
    CHECK(t.state() == "closed");
}

// ---- reconnects -----------------------------------------------------------------

TEST_CASE("reconnects go round-robin, from the address after the one lost") {
    script t(cluster());
    t.connect();
    t.refused();  // a
    REQUIRE(t.opened() == "complete_connects ok, on_open");  // on b
    CHECK(t.lost() ==
          "count_lost, on_lost connection_lost: gone, "
          "on_reconnect_scheduled 1 100ms connection_lost: gone, arm_timer 100ms");
    CHECK(t.timer() == "start_attempt c");
    CHECK(t.failed() == "count_failed_attempt, on_reconnect_scheduled 2 200ms connect_failed: "
                        "timed out, arm_timer 200ms");
    CHECK(t.timer() == "start_attempt a");
    t.failed();
    CHECK(t.timer() == "start_attempt b");
    t.failed();
    CHECK(t.timer() == "start_attempt c");
    CHECK(t.opened() == "complete_connects ok, on_open");
    t.lost();  // c
    CHECK(t.timer() == "start_attempt a");
}

TEST_CASE("a refused reconnect moves on to the next address at once; after a whole round "
          "refused, the refused interval") {
    auto t = open_on_a();
    t.lost();
    CHECK(t.timer() == "start_attempt b");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(2, "0ms") + ", start_attempt c");
    CHECK(t.state() == "reconnecting");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(3, "0ms") + ", start_attempt a");
    CHECK(t.refused() ==
          "count_failed_attempt, " + refused_pause(4, "250ms") + ", arm_timer 250ms");
    CHECK(t.state() == "waiting_to_reconnect");
    // The next round: the same, from the next address.
    CHECK(t.timer() == "start_attempt b");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(5, "0ms") + ", start_attempt c");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(6, "0ms") + ", start_attempt a");
    CHECK(t.refused() ==
          "count_failed_attempt, " + refused_pause(7, "250ms") + ", arm_timer 250ms");
    CHECK(t.timer() == "start_attempt b");
    CHECK(t.opened() == "complete_connects ok, on_open");
}

TEST_CASE("other failures wait the backoff, addresses untried or not; a round starts after each "
          "pause") {
    auto t = open_on_a();
    t.lost();  // 100 ms
    CHECK(t.timer() == "start_attempt b");
    CHECK(t.failed() == "count_failed_attempt, on_reconnect_scheduled 2 200ms connect_failed: "
                        "timed out, arm_timer 200ms");
    CHECK(t.timer() == "start_attempt c");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(3, "0ms") + ", start_attempt a");
    CHECK(t.failed() == "count_failed_attempt, on_reconnect_scheduled 4 400ms connect_failed: "
                        "timed out, arm_timer 400ms");  // refused ones did not make it grow
    CHECK(t.timer() == "start_attempt b");  // a new round: b, c, a
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(5, "0ms") + ", start_attempt c");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(6, "0ms") + ", start_attempt a");
    CHECK(t.refused() ==
          "count_failed_attempt, " + refused_pause(7, "250ms") + ", arm_timer 250ms");
}

TEST_CASE("the policy's limits hold within a round: it gives up without trying the rest") {
    SUBCASE("max attempts") {
        auto cfg = cluster();
        cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_attempts(3);
        auto t = open_on_a(cfg);
        t.lost();  // 1
        t.timer();
        t.refused();  // 2: on to c at once
        const std::string why = "connect_failed: Connection refused (no more reconnect attempts: "
                                "max attempts (3) reached)";
        CHECK(t.refused() == "count_failed_attempt, set_last_error " + why +
                                 ", complete_connects connect_failed, on_closed " + why);
        CHECK(t.state() == "closed");
    }
    SUBCASE("max total time: moving on at once adds no pause") {
        auto cfg = cluster();
        cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_total(1s);
        auto t = open_on_a(cfg);
        t.lost();  // lost at t.now
        t.timer();
        t.now += 950ms;
        CHECK(t.refused() ==
              "count_failed_attempt, " + refused_pause(2, "0ms") + ", start_attempt c");
        t.now += 40ms;
        CHECK(t.refused() ==
              "count_failed_attempt, " + refused_pause(3, "0ms") + ", start_attempt a");
        CHECK(t.refused().find("no more reconnect attempts: max total time (1000 ms)") !=
              std::string::npos);  // 990 + 250 > 1000
        CHECK(t.state() == "closed");
    }
}

TEST_CASE("refused_reconnect_interval 0: a refused attempt is like any other failure, it waits "
          "the backoff") {
    auto cfg = cluster();
    cfg.refused_reconnect_interval = 0ms;
    auto t = open_on_a(cfg);
    t.lost();
    CHECK(t.timer() == "start_attempt b");
    CHECK(t.refused() == "count_failed_attempt, " + refused_pause(2, "200ms") + ", arm_timer 200ms");
    CHECK(t.timer() == "start_attempt c");
}

TEST_CASE("close while a reconnect moves on: the attempt is abandoned, no other address tried") {
    auto t = open_on_a();
    t.lost();
    t.timer();
    t.refused();  // on to c at once
    CHECK(t.close() == "close_session");
    CHECK(t.ended(errc::connection_closed, "closed by the client while connecting", true) ==
          "complete_closes, complete_connects connection_closed, "
          "on_closed connection_closed: closed by the client while connecting, release_hooks");
    CHECK(t.timer().empty());
}
