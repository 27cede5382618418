// An operation's diagnostics (see op_diagnostics.hpp).
#include "op_diagnostics.hpp"

namespace tarry::amqp::detail {

diagnostics op_diagnostics(std::string_view operation, diagnostics failure) {
    if (!failure.code) return {};
    const std::string& why = failure.message.empty() ? failure.code.message() : failure.message;
    std::string message;
    message.reserve(operation.size() + 2 + why.size());
    message.append(operation).append(": ").append(why);
    failure.message = std::move(message);
    return failure;
}

diagnostics op_diagnostics(std::string_view operation, ev_op_done& ev) {
    if (!ev.ec) return {};
    return op_diagnostics(operation, {ev.ec, std::move(ev.detail), std::move(ev.closed_by)});
}

}  // namespace tarry::amqp::detail
