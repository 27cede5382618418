#include "health_state.hpp"

namespace tarry::detail {

void health_state::event(const connection_event& e) {
    using kind = connection_event::kind;
    auto& c = e.copies ? copies_ : consuming_;
    // The consuming connection's lines carry no name of their own.
    const auto text = [&e] { return e.copies ? e.text() : "consuming connection " + e.text(); };
    switch (e.what) {
        case kind::connected:
            c.open = true;
            c.down.clear();
            break;
        case kind::lost:
        case kind::closed:
            c = connection{false, false, text(), {}};
            break;
        case kind::blocked:
            c.blocked = true;
            c.blocker = text();
            break;
        case kind::unblocked:
            c.blocked = false;
            c.blocker.clear();
            break;
        case kind::consuming: subscribe_failure.clear(); break;
        case kind::subscribe_failed: subscribe_failure = e.text(); break;
        case kind::reconnecting:        // `down` keeps why it went
        case kind::lane_change_failed:  // the old lane goes on
        case kind::control_attached:    // jobs flow with or without the control stream
        case kind::control_failed:
        case kind::consumer_cancelled:  // consuming() says whether a lane consumes meanwhile
            break;
    }
}

consumer_health health_state::health(bool consuming) const {
    switch (life_) {
        case life::not_started: return {false, false, "not started"};
        case life::stopping: return {false, false, "stopping"};
        case life::stopped: return {false, false, "stopped"};
        case life::running: break;
    }
    consumer_health h;
    // The consuming connection publishes nothing, so the broker never blocks it.
    h.consuming = consuming_.open && consuming;
    h.copies_open = copies_.open && !copies_.blocked;
    const auto add = [&h](const std::string& why) { h.reason += (h.reason.empty() ? "" : "; ") + why; };
    if (!consuming_.open) {
        add(consuming_.down.empty() ? "consuming connection not open yet" : consuming_.down);
    } else if (!consuming) {
        add(subscribe_failure.empty() ? "not consuming yet" : "not consuming: " + subscribe_failure);
    }
    if (!copies_.open) {
        add(copies_.down.empty() ? "copies connection not open yet" : copies_.down);
    } else if (copies_.blocked) {
        add(copies_.blocker);
    }
    return h;
}

}  // namespace tarry::detail
