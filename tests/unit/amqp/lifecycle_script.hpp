// A scripted connection_lifecycle for its unit tests: each input is one
// call that returns the actions it asked for as one readable line, time is
// stepped by hand, and reach() walks to any state the ordinary way.
#pragma once

#include "detail/connection_lifecycle.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <initializer_list>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace lifecycle_test {

using namespace std::chrono_literals;
namespace amqp = tarry::amqp;
namespace life = amqp::detail::life;
namespace in = life::input;
namespace act = life::action;
using amqp::errc;
using amqp::detail::connection_lifecycle;
using st = life::state;

inline std::string name_of(std::error_code ec) {
    if (!ec) return "ok";
    for (auto [e, n] : {std::pair{errc::connect_failed, "connect_failed"},
                        std::pair{errc::connection_lost, "connection_lost"},
                        std::pair{errc::connection_closed, "connection_closed"}}) {
        if (ec == e) return n;
    }
    return ec.message();
}

inline std::string said(const amqp::diagnostics& d) { return name_of(d.code) + ": " + d.message; }

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};

/// One action as text. start_attempt names its address's host when the
/// config has several (`hosts`, in the order of addresses()).
inline std::string describe(const life::any_action& a, const std::vector<std::string>& hosts = {}) {
    return std::visit(
        overloaded{
            [&hosts](const act::start_attempt& s) -> std::string {
                if (hosts.size() < 2) return "start_attempt";
                return "start_attempt " +
                       (s.address < hosts.size() ? hosts[s.address] : "#" + std::to_string(s.address));
            },
            [](const act::close_session&) -> std::string { return "close_session"; },
            [](const act::arm_timer& t) {
                return "arm_timer " + std::to_string(t.delay.count()) + "ms";
            },
            [](const act::cancel_timer&) -> std::string { return "cancel_timer"; },
            [](const act::complete_connects& c) { return "complete_connects " + name_of(c.why.code); },
            [](const act::complete_closes&) -> std::string { return "complete_closes"; },
            [](const act::count_failed_attempt&) -> std::string { return "count_failed_attempt"; },
            [](const act::count_lost&) -> std::string { return "count_lost"; },
            [](const act::set_last_error& e) { return "set_last_error " + said(e.diag); },
            [](const act::call_on_open&) -> std::string { return "on_open"; },
            [](const act::call_on_lost& l) { return "on_lost " + said(l.diag); },
            [](const act::call_on_reconnect_scheduled& r) {
                return "on_reconnect_scheduled " + std::to_string(r.attempt) + " " +
                       std::to_string(r.delay.count()) + "ms " + said(r.diag);
            },
            [](const act::call_on_closed& c) { return "on_closed " + said(c.diag); },
            [](const act::release_hooks&) -> std::string { return "release_hooks"; },
        },
        a);
}

/// 100 ms doubling to 30 s, no jitter; 250 ms while refused; reconnect on.
inline amqp::connection_config exact() {
    amqp::connection_config c;
    c.reconnect_backoff = tarry::retry::backoff_policy::exponential(100ms, 2.0, 30s);
    c.refused_reconnect_interval = 250ms;
    return c;
}

/// A lifecycle, a hand-stepped clock, and each input as one call that
/// returns the actions it asked for, joined by ", ".
struct script {
    explicit script(const amqp::connection_config& c = exact()) : lc(c, [] { return 0.5; }) {
        for (const auto& a : c.addresses()) hosts.push_back(a.host);
    }

    connection_lifecycle lc;
    std::vector<std::string> hosts;  // of the config's addresses, in order
    std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point{} + 1000h;
    life::actions last;  // what the last input asked for

    std::string feed(life::any_input i) {
        last = lc.on(std::move(i));
        std::string out;
        for (const auto& a : last) out += (out.empty() ? "" : ", ") + describe(a, hosts);
        return out;
    }
    std::string connect() { return feed(in::connect_requested{}); }
    std::string close() { return feed(in::close_requested{}); }
    std::string opened() { return feed(in::opened{}); }
    std::string timer() { return feed(in::timer_fired{}); }
    /// The session ended; the lifecycle's state says what that was.
    std::string ended(errc code, std::string why, bool refused = false) {
        return feed(in::ended{{code, std::move(why), std::nullopt}, refused, now});
    }
    std::string lost(std::string why = "gone") { return ended(errc::connection_lost, why); }
    std::string failed(std::string why = "timed out") { return ended(errc::connect_failed, why); }
    std::string refused() { return ended(errc::connect_failed, "Connection refused", true); }

    std::string state() const { return to_string(lc.state()); }
};

/// A script in state `s`, reached the ordinary way.
inline script reach(st s, const amqp::connection_config& c = exact()) {
    script t(c);
    const auto connect_and_open = [&t] {
        t.connect();
        t.opened();
    };
    switch (s) {
    case st::idle: break;
    case st::connecting: t.connect(); break;
    case st::open: connect_and_open(); break;
    case st::waiting_to_reconnect: connect_and_open(); t.lost(); break;
    case st::reconnecting: connect_and_open(); t.lost(); t.timer(); break;
    case st::closing: connect_and_open(); t.close(); break;
    case st::aborting: t.connect(); t.close(); break;
    case st::closed: t.connect(); t.failed(); break;
    }
    REQUIRE(t.lc.state() == s);
    return t;
}

inline constexpr st every_state[] = {st::idle,         st::connecting, st::open,    st::waiting_to_reconnect,
                                     st::reconnecting, st::closing,    st::aborting, st::closed};

}  // namespace lifecycle_test
