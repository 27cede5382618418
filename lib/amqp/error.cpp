// The "tarry.amqp" and "tarry.amqp.broker" error categories, and tarry::error.
#include "tarry/amqp/error.hpp"

#include "tarry/amqp/wire/error.hpp"
#include "tarry/amqp/wire/methods.hpp"

namespace tarry::amqp {
namespace {

class amqp_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tarry.amqp"; }

    std::string message(int ev) const override {
        switch (static_cast<errc>(ev)) {
        case errc::invalid_url: return "invalid AMQP URL";
        case errc::invalid_argument: return "invalid argument";
        case errc::connect_failed: return "could not connect to the broker";
        case errc::connect_timeout: return "connecting to the broker timed out";
        case errc::tls_handshake_failed: return "TLS handshake failed";
        case errc::protocol_version_refused: return "the broker refused AMQP 0-9-1";
        case errc::unsupported_mechanism: return "the broker offers no supported SASL mechanism";
        case errc::authentication_failed: return "authentication failed";
        case errc::vhost_access_refused: return "access to the virtual host refused";
        case errc::protocol_error: return "AMQP protocol error";
        case errc::connection_lost: return "connection to the broker lost";
        case errc::heartbeat_timeout: return "missed heartbeats: the broker is unreachable";
        case errc::connection_closed: return "connection closed by the client";
        case errc::channel_closed: return "channel closed";
        case errc::channel_limit_reached: return "no free channel number";
        case errc::publish_nacked: return "the broker refused the publish (basic.nack)";
        case errc::consumer_cancelled: return "the broker cancelled the consumer";
        case errc::operation_cancelled: return "operation cancelled";
        case errc::not_connected: return "not connected";
        case errc::close_timeout: return "the peer did not answer the close in time";
        case errc::header_too_large: return "the message's properties do not fit one frame (frame_max)";
        }
        return "unknown tarry.amqp error " + std::to_string(ev);
    }
};

const char* reply_name(int code) noexcept {
    switch (code) {
    case 200: return "REPLY_SUCCESS";
    case 311: return "CONTENT_TOO_LARGE";
    case 312: return "NO_ROUTE";
    case 313: return "NO_CONSUMERS";
    case 320: return "CONNECTION_FORCED";
    case 402: return "INVALID_PATH";
    case 403: return "ACCESS_REFUSED";
    case 404: return "NOT_FOUND";
    case 405: return "RESOURCE_LOCKED";
    case 406: return "PRECONDITION_FAILED";
    case 501: return "FRAME_ERROR";
    case 502: return "SYNTAX_ERROR";
    case 503: return "COMMAND_INVALID";
    case 504: return "CHANNEL_ERROR";
    case 505: return "UNEXPECTED_FRAME";
    case 506: return "RESOURCE_ERROR";
    case 530: return "NOT_ALLOWED";
    case 540: return "NOT_IMPLEMENTED";
    case 541: return "INTERNAL_ERROR";
    }
    return nullptr;
}

class broker_category_impl final : public std::error_category {
public:
    const char* name() const noexcept override { return "tarry.amqp.broker"; }

    std::string message(int ev) const override {
        const char* n = reply_name(ev);
        return std::string(n ? n : "broker reply code") + " (" + std::to_string(ev) + ")";
    }
};

}  // namespace

const std::error_category& amqp_category() noexcept {
    static const amqp_category_impl instance;
    return instance;
}

const std::error_category& broker_category() noexcept {
    static const broker_category_impl instance;
    return instance;
}

std::string broker_reply::to_string() const {
    // RabbitMQ's texts start with the code's name ("NOT_FOUND - no queue ...").
    std::string s = std::to_string(code);
    const char* n = reply_name(code);
    if (text.empty()) {
        if (n) s += std::string(" ") + n;
    } else if (n && text.rfind(n, 0) != 0) {
        s += std::string(" ") + n + " - " + text;
    } else {
        s += ' ';
        s += text;
    }
    if (class_id != 0 || method_id != 0) {
        s += " (in ";
        if (const auto* m = wire::find_method(class_id, method_id)) {
            s += m->name;
        } else {
            s += "class " + std::to_string(class_id) + " method " + std::to_string(method_id);
        }
        s += ')';
    }
    return s;
}

bool is_hard_reply_code(std::uint16_t code) noexcept {
    switch (code) {
    case 320:
    case 402:
    case 501:
    case 502:
    case 503:
    case 504:
    case 505:
    case 506:
    case 530:
    case 540:
    case 541: return true;
    default: return false;
    }
}

bool requires_reconnect(std::error_code ec) noexcept {
    if (!ec) return false;
    if (ec.category() == broker_category()) {
        return is_hard_reply_code(static_cast<std::uint16_t>(ec.value()));
    }
    if (ec.category() == amqp_category()) {
        switch (static_cast<errc>(ec.value())) {
        case errc::invalid_url:
        case errc::invalid_argument:
        case errc::header_too_large:
        case errc::connection_closed:
        case errc::channel_closed:
        case errc::channel_limit_reached:
        case errc::publish_nacked:
        case errc::consumer_cancelled:
        case errc::operation_cancelled: return false;
        default: return true;
        }
    }
    // Codec errors and system errors come from the connection's bytes or socket.
    return true;
}

}  // namespace tarry::amqp

// ---- tarry::error ------------------------------------------------------------------

namespace tarry {

struct error::payload {
    payload(std::string_view context, amqp::diagnostics d) : why(std::move(d)) {
        const std::string fallback = why.message.empty() && why.code ? why.code.message() : "";
        const std::string& text = why.message.empty() ? fallback : why.message;
        what.reserve(context.size() + 2 + text.size());
        what = context;
        if (!context.empty() && !text.empty()) what += ": ";
        what += text;
    }
    amqp::diagnostics why;
    std::string what;
};

error::error(amqp::diagnostics why) : error(std::string_view{}, std::move(why)) {}

error::error(std::string_view context, amqp::diagnostics why)
    : error(std::make_shared<const payload>(context, std::move(why))) {}

error::error(std::shared_ptr<const payload> p)
    : std::system_error(p->why.code), p_(std::move(p)) {}

const char* error::what() const noexcept { return p_->what.c_str(); }

const amqp::diagnostics& error::diagnostics() const noexcept { return p_->why; }

}  // namespace tarry
