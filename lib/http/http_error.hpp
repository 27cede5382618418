// A request the endpoint refuses: its status and a message for a person.
#pragma once

#include <string>

namespace tarry::http_detail {

struct http_error {
    unsigned status = 400;  ///< 400, 404, 413, ...
    std::string message;    ///< one line: what was wrong, naming the field
};

/// The JSON body of an error response: {"error":"<message>"}.
std::string error_json(const http_error& e);

}  // namespace tarry::http_detail
