// The publish gateway's JSON: the request read into messages, and the
// response built from what came of each publish.
#pragma once

#include "http_error.hpp"

#include "tarry/amqp/message.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

namespace tarry::http_detail {

struct gateway_message {
    std::string body;  ///< a JSON string's bytes as given; any other JSON value serialized
    bool body_is_json = false;  ///< the body was not a string: content_type application/json
    std::optional<std::chrono::microseconds> delay;  ///< "delay" (s): from now; empty: the queue's default
    std::optional<std::chrono::milliseconds> ttl;    ///< "ttl" (s): the message's expiration
    amqp::field_table headers;  ///< "headers": strings, integers, numbers, booleans
    std::optional<std::string> id;  ///< "id": becomes message_id (1..255 bytes)
};

struct gateway_limits {
    std::size_t max_messages = 100;
    std::optional<std::chrono::milliseconds> max_delay;  ///< a delay above it is a 400
};

/// {"messages":[{"body":…,"delay":S,"ttl":S,"headers":{…},"id":"…"},…]}:
/// 1..max_messages messages, each with a body. Anything else - malformed
/// JSON, an unknown field, a wrong type, a negative or non-finite delay or
/// ttl, a delay above max_delay, a header name over 255 bytes - is a 400
/// naming the message's index and the field.
std::variant<std::vector<gateway_message>, http_error> parse_gateway_request(std::string_view body,
                                                                             const gateway_limits& limits);

/// The body of PUT /v1/queues/{q}/messages/{id}, a reschedule: one message
/// object, {"body":…,"delay":S,"ttl":S,"headers":{…}}, read as a message
/// of a publish is ("id", if given, must be `job_id`); its id is `job_id`.
/// Problems are a 400 naming the field ("delay: ...").
std::variant<gateway_message, http_error> parse_reschedule_request(std::string_view body, std::string_view job_id,
                                                                   const gateway_limits& limits);

/// What came of one message's publish.
struct publish_result {
    std::string id;        ///< its message_id
    std::error_code error; ///< empty when the broker confirmed it
    std::string message;   ///< why not, for a person (empty when confirmed)
};

/// 201 {"ids":[…]} when every message was confirmed; otherwise 207
/// {"ids":[id or null,…],"errors":[{"index":I,"error":"…"},…]}.
struct gateway_response {
    unsigned status;
    std::string body;
};
gateway_response gateway_response_of(std::span<const publish_result> results);

/// The answer to a cancel or a reschedule: 200 {"id":…} once confirmed;
/// 504 when not confirmed in time (it may still land); 400 for what the
/// publisher refused before sending; 502 for what the broker refused or a
/// connection lost on the way ({"error":…} naming why).
gateway_response command_response_of(const publish_result& result);

}  // namespace tarry::http_detail
