// A job event as one JSON object: the body of a lifecycle event
// (docs/events.md) and a line of the echo_worker sample. One definition of
// its fields and number format (docs/design.md, "One vocabulary").
#pragma once

#include "tarry/consumer/job_event.hpp"

#include <string>
#include <string_view>

namespace tarry {

/// {"event":E,"queue":Q,"id":ID,"due":EPOCH_S,"at":EPOCH_S,"attempt":N}, then
/// "reason" (when not empty), "next_due" (when set) and
/// "cancel_requested":true (when set), in that order, with no spaces. E is
/// to_string(e.what); an empty `queue` leaves "queue" out. Times are seconds
/// since the Unix epoch with six decimals (microseconds, truncated), e.g.
/// 1767225600.250000. Always valid JSON (UTF-8), whatever the bytes: each
/// byte of the id, reason or queue that is not part of well-formed UTF-8 is
/// written `\ufffd`. Pure; any thread.
std::string to_json(const job_event& e, std::string_view queue);

/// `t` as to_json writes it: seconds since the epoch with six decimals
/// ("-0.500000" before the epoch).
std::string epoch_seconds_text(wall_time t);

/// `s` as a JSON string literal, quotes included, as to_json writes strings:
/// ", \ and control characters escaped, each byte that is not part of
/// well-formed UTF-8 written `\ufffd`.
std::string json_quoted(std::string_view s);

}  // namespace tarry
