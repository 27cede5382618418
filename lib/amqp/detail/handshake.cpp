// Pure pieces of the connection handshake (see the header).
#include "handshake.hpp"

#include <algorithm>

namespace tarry::amqp::detail {

wire::field_table client_properties(std::string_view connection_name) {
    wire::field_table caps{
        {"publisher_confirms", true},
        {"exchange_exchange_bindings", true},
        {"basic.nack", true},
        {"consumer_cancel_notify", true},
        {"connection.blocked", true},
        {"authentication_failure_close", true},
        {"per_consumer_qos", true},
    };
    wire::field_table props{
        {"product", "tarry"},
        {"version", client_version},
        {"platform", "C++20 / Boost.Asio"},
        {"information", "AMQP 0-9-1 client of the tarry job scheduler"},
        {"capabilities", std::move(caps)},
    };
    if (!connection_name.empty()) props.set("connection_name", std::string(connection_name));
    return props;
}

std::string plain_response(std::string_view user, std::string_view password) {
    std::string r;
    r.reserve(user.size() + password.size() + 2);
    r += '\0';
    r += user;
    r += '\0';
    r += password;
    return r;
}

bool offers_mechanism(std::string_view mechanisms, std::string_view mechanism) noexcept {
    while (!mechanisms.empty()) {
        const auto sp = mechanisms.find(' ');
        if (mechanisms.substr(0, sp) == mechanism) return true;
        if (sp == std::string_view::npos) break;
        mechanisms.remove_prefix(sp + 1);
    }
    return false;
}

namespace {
template <class T>
T smaller_nonzero(T a, T b) noexcept {
    if (a == 0) return b;
    if (b == 0) return a;
    return std::min(a, b);
}
}  // namespace

negotiated_limits negotiate(const wire::connection_tune& proposal, std::uint16_t channel_max,
                            std::uint32_t frame_max, std::uint16_t heartbeat) noexcept {
    negotiated_limits n;
    n.channel_max = smaller_nonzero(proposal.channel_max, channel_max);
    if (n.channel_max == 0) n.channel_max = 65535;
    n.frame_max = smaller_nonzero(proposal.frame_max, frame_max);
    if (n.frame_max == 0) n.frame_max = 131072;
    n.frame_max = std::max(n.frame_max, wire::min_frame_max);
    n.heartbeat = heartbeat == 0 ? 0 : smaller_nonzero(proposal.heartbeat, heartbeat);
    return n;
}

}  // namespace tarry::amqp::detail
