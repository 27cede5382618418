// Well-formed UTF-8 (RFC 3629), which AMQP's strings should be and often
// are not (a message_id may hold any bytes): the one check for text read
// off the wire before it goes where UTF-8 is required (JSON, Prometheus
// labels, HTML). Pure; any thread.
#pragma once

#include <cstddef>
#include <string_view>

namespace tarry::amqp::wire {

/// The length (1 to 4) of the well-formed UTF-8 sequence `s` starts with;
/// 0 when it starts with none: empty, a stray continuation byte, a cut
/// sequence, an overlong form, a surrogate, or above U+10FFFF.
std::size_t utf8_sequence(std::string_view s) noexcept;

}  // namespace tarry::amqp::wire
