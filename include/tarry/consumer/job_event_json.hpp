// A job event as one JSON object: the body of a lifecycle event
// (docs/events.md) and a line of the echo_worker sample. One definition of
// its fields and number format (docs/design.md, "One vocabulary").
#pragma once

#include "tarry/consumer/job_event.hpp"
#include "tarry/time/epoch_text.hpp"  // epoch_seconds_text, declared here before

#include <string>
#include <string_view>

namespace tarry {

/// {"event":E,"queue":Q,"id":ID,"due":EPOCH_S,"at":EPOCH_S,"attempt":N}, then
/// "reason" (when not empty), "next_due" (when set) and
/// "cancel_requested":true (when set), in that order, with no spaces. E is
/// to_string(e.what); an empty `queue` leaves "queue" out. Times are as
/// epoch_seconds_text (tarry/time/epoch_text.hpp) writes them, e.g.
/// 1767225600.250000. Always valid JSON (UTF-8), whatever the bytes: each
/// byte of the id, reason or queue that is not part of well-formed UTF-8 is
/// written `\ufffd`. Pure; any thread.
std::string to_json(const job_event& e, std::string_view queue);

/// `s` as a JSON string literal, quotes included, as to_json writes strings:
/// ", \ and control characters escaped, each byte that is not part of
/// well-formed UTF-8 written `\ufffd`.
std::string json_quoted(std::string_view s);

}  // namespace tarry
