// Job events as JSON (see the header).
#include "tarry/consumer/job_event_json.hpp"

#include "tarry/amqp/wire/utf8.hpp"

#include <chrono>
#include <cstdio>

namespace tarry {

using amqp::wire::utf8_sequence;

std::string json_quoted(std::string_view s) {
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_sequence(s.substr(i));
        if (n == 0) {
            out += "\\ufffd";
            ++i;
        } else if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
            ++i;
        } else {
            out.append(s.substr(i, n));
            i += n;
        }
    }
    out += '"';
    return out;
}

std::string to_json(const job_event& e, std::string_view queue) {
    std::string s = "{\"event\":";
    s += json_quoted(to_string(e.what));
    if (!queue.empty()) {
        s += ",\"queue\":";
        s += json_quoted(queue);
    }
    s += ",\"id\":";
    s += json_quoted(e.id);
    s += ",\"due\":";
    s += epoch_seconds_text(e.due);
    s += ",\"at\":";
    s += epoch_seconds_text(e.at);
    s += ",\"attempt\":";
    s += std::to_string(e.attempt);
    if (!e.reason.empty()) {
        s += ",\"reason\":";
        s += json_quoted(e.reason);
    }
    if (e.next_due) {
        s += ",\"next_due\":";
        s += epoch_seconds_text(*e.next_due);
    }
    if (e.cancel_requested) s += ",\"cancel_requested\":true";
    s += '}';
    return s;
}

}  // namespace tarry
