// Percent-decoding (RFC 3986, section 2.1) of a request target's parts: the
// queue in a publish path and the parameters of /jobs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tarry::http_detail {

/// `s` with each %XX (two hex digits, either case) replaced by its byte;
/// nothing when a '%' is not followed by two hex digits. '+' stays '+' (it
/// means a space only in HTML forms, and a cursor may hold one).
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace tarry::http_detail
