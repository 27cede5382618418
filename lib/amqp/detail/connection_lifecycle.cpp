// The connection's life (see the header for the table and the promises).
#include "connection_lifecycle.hpp"

#include <string>
#include <utility>

namespace tarry::amqp::detail {

namespace life {

const char* to_string(state s) noexcept {
    switch (s) {
    case state::idle: return "idle";
    case state::connecting: return "connecting";
    case state::open: return "open";
    case state::waiting_to_reconnect: return "waiting_to_reconnect";
    case state::reconnecting: return "reconnecting";
    case state::closing: return "closing";
    case state::aborting: return "aborting";
    case state::closed: return "closed";
    }
    return "?";
}

}  // namespace life

using life::state;
namespace act = life::action;

connection_lifecycle::connection_lifecycle(const connection_config& config,
                                           retry::random_source random)
    : reconnect_(config.reconnect),
      policy_(config.reconnect_backoff, config.refused_reconnect_interval),
      random_(std::move(random)),
      addresses_(1 + config.failover.size()) {}

life::actions connection_lifecycle::on(life::any_input in) {
    life::actions out;
    std::visit([&](auto& i) { on_input(i, out); }, in);
    return out;
}

void connection_lifecycle::on_input(const life::input::connect_requested&, life::actions& out) {
    switch (state_) {
    case state::idle:
    case state::closed:
        policy_.reset();
        state_ = state::connecting;
        start(0, 1, out);
        return;
    case state::open:
    case state::closing:  // still open until the close is done
        out.emplace_back(act::complete_connects{});
        return;
    default:  // an attempt, a wait or an abort is under way: the waiter waits for its end
        return;
    }
}

void connection_lifecycle::on_input(const life::input::close_requested&, life::actions& out) {
    switch (state_) {
    case state::idle:
    case state::closed:
        out.emplace_back(act::complete_closes{});
        return;
    case state::waiting_to_reconnect:
        out.emplace_back(act::cancel_timer{});
        close_done(diagnostics{errc::connection_closed, "closed by the client", std::nullopt}, out);
        return;
    case state::connecting:
    case state::reconnecting:
        state_ = state::aborting;
        out.emplace_back(act::close_session{});
        return;
    case state::open:
        state_ = state::closing;
        out.emplace_back(act::close_session{});
        return;
    case state::closing:
    case state::aborting:  // under way: the waiter completes with it
        return;
    }
}

void connection_lifecycle::on_input(const life::input::opened&, life::actions& out) {
    if (state_ != state::connecting && state_ != state::reconnecting) return;
    state_ = state::open;
    policy_.reset();
    out.emplace_back(act::complete_connects{});
    out.emplace_back(act::call_on_open{});
}

void connection_lifecycle::on_input(life::input::ended& in, life::actions& out) {
    switch (state_) {
    case state::connecting:  // the caller's connect: each address once, never retried
        out.emplace_back(act::count_failed_attempt{});
        if (tried_ < addresses_) {
            start(next_address(), tried_ + 1, out);
            return;
        }
        if (addresses_ > 1) {
            in.why.message += " (all " + std::to_string(addresses_) +
                              " addresses tried; this was the last)";
            out.emplace_back(act::set_last_error{in.why});
        }
        finish(in.why, out);
        return;
    case state::reconnecting:
        out.emplace_back(act::count_failed_attempt{});
        reconnect_after(std::move(in.why),
                        in.refused ? attempt_failure::refused : attempt_failure::other,
                        std::chrono::duration_cast<retry::duration>(in.now - lost_at_), out);
        return;
    case state::open:
        out.emplace_back(act::count_lost{});
        out.emplace_back(act::call_on_lost{in.why});
        if (!reconnect_) {
            finish(in.why, out);
            return;
        }
        lost_at_ = in.now;
        reconnect_after(std::move(in.why), attempt_failure::other, retry::duration{0}, out);
        return;
    case state::closing:
    case state::aborting:
        close_done(in.why, out);
        return;
    default:  // no session
        return;
    }
}

void connection_lifecycle::on_input(const life::input::timer_fired&, life::actions& out) {
    if (state_ != state::waiting_to_reconnect) return;  // cancelled, or late
    state_ = state::reconnecting;
    start(next_address(), 1, out);
}

void connection_lifecycle::start(std::size_t address, std::size_t tried, life::actions& out) {
    address_ = address;
    tried_ = tried;
    out.emplace_back(act::start_attempt{address});
}

void connection_lifecycle::reconnect_after(diagnostics why, attempt_failure f,
                                           retry::duration elapsed, life::actions& out) {
    // While open, tried_ counts the round that opened: a loss never moves on
    // at once anyway (it is not a refusal).
    const auto decision = policy_.after(f, elapsed, random_, tried_ < addresses_);
    if (!decision.retry) {
        why.message += " (no more reconnect attempts: " + decision.reason + ")";
        out.emplace_back(act::set_last_error{why});
        finish(why, out);
        return;
    }
    out.emplace_back(
        act::call_on_reconnect_scheduled{policy_.failures(), decision.delay, std::move(why)});
    if (decision.at_once) {
        state_ = state::reconnecting;
        start(next_address(), tried_ + 1, out);
        return;
    }
    state_ = state::waiting_to_reconnect;
    out.emplace_back(act::arm_timer{decision.delay});
}

void connection_lifecycle::finish(const diagnostics& why, life::actions& out) {
    state_ = state::closed;
    diagnostics failed = why;
    if (!failed.code) failed.code = errc::connection_closed;
    out.emplace_back(act::complete_connects{std::move(failed)});
    out.emplace_back(act::call_on_closed{why});
}

void connection_lifecycle::close_done(const diagnostics& why, life::actions& out) {
    out.emplace_back(act::complete_closes{});
    finish(why, out);
    out.emplace_back(act::release_hooks{});
}

}  // namespace tarry::amqp::detail
