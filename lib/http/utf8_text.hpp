// Text from outside (message ids, reasons, query strings, queue names) made
// safe to put into JSON, Prometheus labels and HTML, which all need UTF-8.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tarry::http_detail {

/// `s` with every byte that is not part of a well-formed UTF-8 sequence
/// (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF)
/// replaced by U+FFFD. Valid text comes back unchanged.
std::string valid_utf8(std::string_view s);

/// valid_utf8(s), cut to at most `max_bytes` bytes at a character boundary
/// and ended with "..." when it was cut: for quoting a request in an error.
std::string excerpt(std::string_view s, std::size_t max_bytes = 64);

}  // namespace tarry::http_detail
