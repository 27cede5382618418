#include "tarry/consumer/connection_event.hpp"

namespace tarry {

const char* to_string(connection_event::kind k) noexcept {
    switch (k) {
        case connection_event::kind::connected: return "connected";
        case connection_event::kind::consuming: return "consuming";
        case connection_event::kind::lost: return "lost";
        case connection_event::kind::reconnecting: return "reconnecting";
        case connection_event::kind::blocked: return "blocked";
        case connection_event::kind::unblocked: return "unblocked";
        case connection_event::kind::closed: return "closed";
        case connection_event::kind::subscribe_failed: return "subscribe_failed";
        case connection_event::kind::lane_change_failed: return "lane_change_failed";
        case connection_event::kind::control_attached: return "control_attached";
        case connection_event::kind::control_failed: return "control_failed";
        case connection_event::kind::consumer_cancelled: return "consumer_cancelled";
    }
    return "unknown";
}

std::string connection_event::text() const {
    std::string line = copies ? "copies connection " : "";
    const auto with_detail = [&](const char* words) {
        line += words;
        if (!detail.empty()) line += ": " + detail;
        return line;
    };
    switch (what) {
        case kind::connected: return line + "connected";
        case kind::consuming: return line + "consuming";
        case kind::lost: return with_detail("lost");
        case kind::reconnecting:
            return line + "reconnecting in " + std::to_string(delay.count()) + " ms (attempt " +
                   std::to_string(attempt) + ")";
        case kind::blocked: return with_detail("blocked by the broker");
        case kind::unblocked: return line + "unblocked";
        case kind::closed: return with_detail("closed");
        case kind::subscribe_failed:
            return with_detail(("subscribe failed, retrying in " + std::to_string(delay.count()) + " ms").c_str());
        case kind::lane_change_failed: return with_detail("lane change failed");
        case kind::control_attached:
            // The detail says where the read began (a checkpoint), if not at the first entry.
            return line + "control stream read up to its end" + (detail.empty() ? "" : " " + detail) + ": cancels apply";
        case kind::control_failed: return with_detail("control stream");
        case kind::consumer_cancelled:
            return with_detail(("consumer cancelled by the broker, consuming again in " +
                                std::to_string(delay.count()) + " ms")
                                   .c_str());
    }
    return line + tarry::to_string(what);
}

}  // namespace tarry
