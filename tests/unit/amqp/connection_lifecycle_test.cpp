// The connection's life, one transition at a time: each input in each
// state, what it asks the driver to do (as one readable line) and where it
// leads. Time is stepped by hand and the backoff has no jitter, so every
// pause is exact.
#include "lifecycle_script.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>

using namespace std::chrono_literals;
using namespace lifecycle_test;

// ---- every state, every input ------------------------------------------------

TEST_CASE("every input in every state: the next state and the actions") {
    struct row {
        st from;
        const char* input;  // connect, close, opened, ended, timer
        st to;
        std::string actions;
    };
    const std::string closed_by_us = "complete_closes, complete_connects connection_lost, "
                                     "on_closed connection_lost: gone, release_hooks";
    const row rows[] = {
        {st::idle, "connect", st::connecting, "start_attempt"},
        {st::idle, "close", st::idle, "complete_closes"},
        {st::idle, "opened", st::idle, ""},
        {st::idle, "ended", st::idle, ""},
        {st::idle, "timer", st::idle, ""},

        {st::connecting, "connect", st::connecting, ""},
        {st::connecting, "close", st::aborting, "close_session"},
        {st::connecting, "opened", st::open, "complete_connects ok, on_open"},
        {st::connecting, "ended", st::closed,
         "count_failed_attempt, complete_connects connection_lost, "
         "on_closed connection_lost: gone"},
        {st::connecting, "timer", st::connecting, ""},

        {st::open, "connect", st::open, "complete_connects ok"},
        {st::open, "close", st::closing, "close_session"},
        {st::open, "opened", st::open, ""},
        {st::open, "ended", st::waiting_to_reconnect,
         "count_lost, on_lost connection_lost: gone, "
         "on_reconnect_scheduled 1 100ms connection_lost: gone, arm_timer 100ms"},
        {st::open, "timer", st::open, ""},

        {st::waiting_to_reconnect, "connect", st::waiting_to_reconnect, ""},
        {st::waiting_to_reconnect, "close", st::closed,
         "cancel_timer, complete_closes, complete_connects connection_closed, "
         "on_closed connection_closed: closed by the client, release_hooks"},
        {st::waiting_to_reconnect, "opened", st::waiting_to_reconnect, ""},
        {st::waiting_to_reconnect, "ended", st::waiting_to_reconnect, ""},
        {st::waiting_to_reconnect, "timer", st::reconnecting, "start_attempt"},

        {st::reconnecting, "connect", st::reconnecting, ""},
        {st::reconnecting, "close", st::aborting, "close_session"},
        {st::reconnecting, "opened", st::open, "complete_connects ok, on_open"},
        {st::reconnecting, "ended", st::waiting_to_reconnect,
         "count_failed_attempt, on_reconnect_scheduled 2 200ms connection_lost: gone, "
         "arm_timer 200ms"},
        {st::reconnecting, "timer", st::reconnecting, ""},

        {st::closing, "connect", st::closing, "complete_connects ok"},
        {st::closing, "close", st::closing, ""},
        {st::closing, "opened", st::closing, ""},
        {st::closing, "ended", st::closed, closed_by_us},
        {st::closing, "timer", st::closing, ""},

        {st::aborting, "connect", st::aborting, ""},
        {st::aborting, "close", st::aborting, ""},
        {st::aborting, "opened", st::aborting, ""},
        {st::aborting, "ended", st::closed, closed_by_us},
        {st::aborting, "timer", st::aborting, ""},

        {st::closed, "connect", st::connecting, "start_attempt"},
        {st::closed, "close", st::closed, "complete_closes"},
        {st::closed, "opened", st::closed, ""},
        {st::closed, "ended", st::closed, ""},
        {st::closed, "timer", st::closed, ""},
    };
    std::map<std::pair<st, std::string>, int> seen;
    for (const auto& r : rows) {
        CAPTURE(to_string(r.from));
        CAPTURE(r.input);
        ++seen[{r.from, r.input}];
        auto t = reach(r.from);
        const std::string i = r.input;
        const auto got = i == "connect" ? t.connect()
                         : i == "close" ? t.close()
                         : i == "opened" ? t.opened()
                         : i == "ended" ? t.lost()
                                        : t.timer();
        CHECK(got == r.actions);
        CHECK(t.state() == std::string(to_string(r.to)));
    }
    CHECK(seen.size() == std::size(every_state) * 5);  // every pair, once
}

TEST_CASE("every input in every state: start_attempt and close_session come last, each hook at "
          "most once") {
    for (const st s : every_state) {
        for (int input = 0; input < 6; ++input) {
            CAPTURE(to_string(s));
            CAPTURE(input);
            auto t = reach(s);
            switch (input) {
            case 0: t.connect(); break;
            case 1: t.close(); break;
            case 2: t.opened(); break;
            case 3: t.lost(); break;
            case 4: t.refused(); break;
            default: t.timer(); break;
            }
            std::map<std::size_t, int> kinds;
            for (std::size_t i = 0; i < t.last.size(); ++i) {
                const auto& a = t.last[i];
                ++kinds[a.index()];
                if (std::holds_alternative<act::start_attempt>(a) ||
                    std::holds_alternative<act::close_session>(a)) {
                    CHECK(i + 1 == t.last.size());
                }
            }
            for (const auto& [kind, n] : kinds) {
                CAPTURE(kind);
                CHECK(n == 1);
            }
        }
    }
}

// ---- the caller's connect -------------------------------------------------------

TEST_CASE("first connect fails: closed, no reconnect, since the caller asked for one connect") {
    script t;
    CHECK(t.connect() == "start_attempt");
    CHECK(t.state() == "connecting");
    CHECK(t.failed("cannot resolve") ==
          "count_failed_attempt, complete_connects connect_failed, "
          "on_closed connect_failed: cannot resolve");
    CHECK(t.state() == "closed");
    CHECK(t.timer().empty());

    SUBCASE("a refused first connect is not retried either") {
        script r;
        r.connect();
        CHECK(r.refused() ==
              "count_failed_attempt, complete_connects connect_failed, "
              "on_closed connect_failed: Connection refused");
        CHECK(r.state() == "closed");
    }
}

TEST_CASE("the connect waiters learn why the attempt failed: code, message and broker reply") {
    const auto connects_of = [](const life::actions& as) {
        for (const auto& a : as) {
            if (const auto* c = std::get_if<act::complete_connects>(&a)) return c->why;
        }
        FAIL("no complete_connects");
        return amqp::diagnostics{};
    };
    script t;
    t.connect();
    const amqp::broker_reply refused{403, "ACCESS_REFUSED - Login was refused", 10, 11};
    t.feed(in::ended{{errc::authentication_failed,
                      "the broker closed the connection: 403 ACCESS_REFUSED - Login was refused",
                      refused},
                     false, t.now});
    const auto why = connects_of(t.last);
    CHECK(why.code == errc::authentication_failed);
    CHECK(why.message == "the broker closed the connection: 403 ACCESS_REFUSED - Login was refused");
    REQUIRE(why.reply);
    CHECK(*why.reply == refused);

    SUBCASE("a connect waiting through reconnects learns why the policy gave up") {
        auto cfg = exact();
        cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_attempts(2);
        auto r = reach(st::reconnecting, cfg);  // the loss was the first failure
        r.connect();
        r.failed("timed out");
        const auto gave_up = connects_of(r.last);
        CHECK(gave_up.code == errc::connect_failed);
        CHECK(gave_up.message == "timed out (no more reconnect attempts: max attempts (2) reached)");
    }
    SUBCASE("a success clears it") {
        script ok;
        ok.connect();
        ok.opened();
        CHECK_FALSE(connects_of(ok.last).code);
        CHECK(connects_of(ok.last).message.empty());
    }
}

TEST_CASE("first connect opens: the connect waiters succeed, then on_open") {
    script t;
    t.connect();
    CHECK(t.connect().empty());  // a second caller waits for the same attempt
    CHECK(t.opened() == "complete_connects ok, on_open");
    CHECK(t.state() == "open");
    CHECK(t.lc.connection_up());
    CHECK(t.connect() == "complete_connects ok");  // already open: at once
}

// ---- loss and reconnect ---------------------------------------------------------

TEST_CASE("lost while open: on_lost, then a reconnect after the policy's first delay, attempt 1") {
    auto t = reach(st::open);
    CHECK(t.lost("socket reset") ==
          "count_lost, on_lost connection_lost: socket reset, "
          "on_reconnect_scheduled 1 100ms connection_lost: socket reset, arm_timer 100ms");
    CHECK(t.state() == "waiting_to_reconnect");
    CHECK_FALSE(t.lc.connection_up());
    CHECK(t.connect().empty());  // waits for the reconnect
    CHECK(t.timer() == "start_attempt");
    CHECK(t.state() == "reconnecting");
}

TEST_CASE("refused while reconnecting: the steady refused interval, however many in a row") {
    auto t = reach(st::reconnecting);  // attempt 1 was the loss
    for (unsigned attempt = 2; attempt < 30; ++attempt) {
        CAPTURE(attempt);
        CHECK(t.refused() == "count_failed_attempt, on_reconnect_scheduled " +
                                 std::to_string(attempt) +
                                 " 250ms connect_failed: Connection refused, arm_timer 250ms");
        CHECK(t.timer() == "start_attempt");
    }
}

TEST_CASE("another failure while reconnecting: the policy's growing delay") {
    auto t = reach(st::waiting_to_reconnect);  // 100 ms after the loss
    const auto pause_after = [&t](bool refused) {
        REQUIRE(t.timer() == "start_attempt");
        refused ? t.refused() : t.failed();
        const auto& r = std::get<act::call_on_reconnect_scheduled>(t.last.at(1));
        CHECK(std::get<act::arm_timer>(t.last.at(2)).delay == r.delay);
        return std::pair{r.attempt, r.delay};
    };
    CHECK(pause_after(false) == std::pair{2u, 200ms});
    CHECK(pause_after(true) == std::pair{3u, 250ms});  // refused ones do not make it grow
    CHECK(pause_after(false) == std::pair{4u, 400ms});
    CHECK(pause_after(false) == std::pair{5u, 800ms});
}

TEST_CASE("a success resets the attempt count and the backoff") {
    auto t = reach(st::reconnecting);
    t.failed();
    t.timer();
    t.refused();
    t.timer();
    CHECK(t.opened() == "complete_connects ok, on_open");
    CHECK(t.lost() ==
          "count_lost, on_lost connection_lost: gone, "
          "on_reconnect_scheduled 1 100ms connection_lost: gone, arm_timer 100ms");
}

TEST_CASE("reconnect disabled: a loss closes the connection for good") {
    auto cfg = exact();
    cfg.reconnect = false;
    auto t = reach(st::open, cfg);
    CHECK(t.lost() ==
          "count_lost, on_lost connection_lost: gone, complete_connects connection_lost, "
          "on_closed connection_lost: gone");
    CHECK(t.state() == "closed");
    CHECK(t.timer().empty());
}

TEST_CASE("the policy gives up: last_error says why, the connect waiters fail, closed once") {
    SUBCASE("max attempts, counted from the loss") {
        auto cfg = exact();
        cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_attempts(3);
        auto t = reach(st::reconnecting, cfg);
        t.refused();
        t.timer();
        CHECK(t.connect().empty());
        const std::string why =
            "connect_failed: timed out (no more reconnect attempts: max attempts (3) reached)";
        CHECK(t.failed() == "count_failed_attempt, set_last_error " + why +
                                ", complete_connects connect_failed, on_closed " + why);
        CHECK(t.state() == "closed");
    }
    SUBCASE("max total time, counted from the loss on the injected clock") {
        auto cfg = exact();
        cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_total(1s);
        auto t = reach(st::reconnecting, cfg);  // lost at t.now; 100 ms
        t.now += 700ms;
        t.failed();  // 700 + 200 <= 1000
        CHECK(std::get<act::arm_timer>(t.last.back()).delay == 200ms);
        t.timer();
        t.now += 200ms;
        CHECK(t.refused().find("no more reconnect attempts: max total time (1000 ms)") !=
              std::string::npos);  // 900 + 250 > 1000
        CHECK(t.state() == "closed");
    }
    SUBCASE("at the loss itself") {
        auto cfg = exact();
        cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_attempts(1);
        auto t = reach(st::open, cfg);
        const std::string why =
            "connection_lost: gone (no more reconnect attempts: max attempts (1) reached)";
        CHECK(t.lost() == "count_lost, on_lost connection_lost: gone, set_last_error " + why +
                              ", complete_connects connection_lost, on_closed " + why);
    }
}

TEST_CASE("a connect after the end starts again: one attempt, the policy from the start") {
    auto cfg = exact();
    cfg.reconnect_backoff = cfg.reconnect_backoff.with_max_attempts(3);
    auto t = reach(st::reconnecting, cfg);
    t.failed();
    t.timer();
    t.failed();
    REQUIRE(t.state() == "closed");
    CHECK(t.connect() == "start_attempt");
    CHECK(t.opened() == "complete_connects ok, on_open");
    CHECK(t.lost().find("on_reconnect_scheduled 1 100ms") != std::string::npos);
}

// ---- close --------------------------------------------------------------------

TEST_CASE("close while waiting to reconnect: the timer is cancelled, closed once") {
    auto t = reach(st::waiting_to_reconnect);
    t.connect();  // a caller waiting for the reconnect
    CHECK(t.close() ==
          "cancel_timer, complete_closes, complete_connects connection_closed, "
          "on_closed connection_closed: closed by the client, release_hooks");
    CHECK(t.state() == "closed");
    CHECK(t.timer().empty());  // a late timer changes nothing
    CHECK(t.close() == "complete_closes");  // closing again: at once, no second on_closed
}

TEST_CASE("close while an attempt runs: the attempt is abandoned, its result ignored, closed "
          "once") {
    for (const st during : {st::connecting, st::reconnecting}) {
        CAPTURE(to_string(during));
        auto t = reach(during);
        CHECK(t.close() == "close_session");
        CHECK(t.state() == "aborting");
        CHECK(t.connect().empty());
        CHECK(t.close().empty());  // its waiter completes with the first
        CHECK(t.opened().empty());  // a late success opens nothing
        CHECK(t.state() == "aborting");
        CHECK(t.ended(errc::connection_closed, "closed by the client while connecting", true) ==
              "complete_closes, complete_connects connection_closed, "
              "on_closed connection_closed: closed by the client while connecting, "
              "release_hooks");  // not counted, not retried, refused or not
        CHECK(t.state() == "closed");
        CHECK(t.timer().empty());
        CHECK(t.failed().empty());
    }
}

TEST_CASE("close while open: connection.close, then closed once when the session ends") {
    auto t = reach(st::open);
    CHECK(t.close() == "close_session");
    CHECK(t.state() == "closing");
    CHECK(t.lc.connection_up());  // still open until the broker answers
    CHECK(t.connect() == "complete_connects ok");
    CHECK(t.close().empty());
    SUBCASE("the broker answers") {
        CHECK(t.ended(errc::connection_closed, "closed by the client") ==
              "complete_closes, complete_connects connection_closed, "
              "on_closed connection_closed: closed by the client, release_hooks");
    }
    SUBCASE("the socket fails first: still the close's end, no on_lost, no reconnect") {
        CHECK(t.lost() ==
              "complete_closes, complete_connects connection_lost, "
              "on_closed connection_lost: gone, release_hooks");
    }
    CHECK(t.state() == "closed");
    CHECK_FALSE(t.lc.connection_up());
}

TEST_CASE("close before any connect, or after the end: completes at once, nothing else") {
    script t;
    CHECK(t.close() == "complete_closes");
    CHECK(t.state() == "idle");
    auto c = reach(st::closed);
    CHECK(c.close() == "complete_closes");
    CHECK(c.state() == "closed");
}

// ---- a whole life -----------------------------------------------------------------

TEST_CASE("a whole life: each hook once per transition, the counts add up") {
    script t;
    std::map<std::string, int> hooks;
    const auto count = [&] {
        for (const auto& a : t.last) {
            const auto d = describe(a);
            if (d.rfind("on_", 0) == 0) ++hooks[d.substr(0, d.find(' '))];
            if (d.rfind("count_", 0) == 0) ++hooks[d];
        }
    };
    const auto step = [&](auto f) {
        f();
        count();
    };
    step([&] { t.connect(); });
    step([&] { t.opened(); });
    step([&] { t.lost(); });
    for (int i = 0; i < 3; ++i) {
        step([&] { t.timer(); });
        step([&] { t.refused(); });
    }
    step([&] { t.timer(); });
    step([&] { t.failed(); });
    step([&] { t.timer(); });
    step([&] { t.opened(); });
    step([&] { t.close(); });
    step([&] { t.ended(errc::connection_closed, "closed by the client"); });
    CHECK(hooks == std::map<std::string, int>{{"on_open", 2},
                                              {"on_lost", 1},
                                              {"on_reconnect_scheduled", 5},
                                              {"on_closed", 1},
                                              {"count_lost", 1},
                                              {"count_failed_attempt", 4}});
    CHECK(t.state() == "closed");
}
