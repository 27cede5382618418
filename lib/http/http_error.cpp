// The body of an error response (see the header).
#include "http_error.hpp"

#include "utf8_text.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace tarry::http_detail {

std::string error_json(const http_error& e) {
    boost::json::object body;
    body["error"] = valid_utf8(e.message);
    return boost::json::serialize(body);
}

}  // namespace tarry::http_detail
