// The soak's inputs, one line at a time (scripts/soak, bench/soak_report):
// echo_worker's event lines (JSON, "due" and "at" in epoch seconds with
// microseconds) and soak_publish's log of confirmed jobs. Times are kept as
// whole epoch microseconds, so comparing a run with its due time is exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace soak {

/// Epoch microseconds.
using micros = std::int64_t;

/// The message_id of soak job n: "soak-<n>".
std::string job_id(std::uint64_t n);
/// n of "soak-<n>"; nothing for any other id.
std::optional<std::uint64_t> job_number(std::string_view id);

/// "1767225600.250000" (as echo_worker and soak_publish write times) in
/// microseconds; nothing when it is not such a number. Up to 6 decimals.
std::optional<micros> read_epoch(std::string_view text);

/// One job event line of echo_worker.
struct worker_event {
    std::string event;                 ///< "run", "succeeded", "retry", "parked", "dead", ...
    std::optional<std::uint64_t> job;  ///< the soak job, when the id is one
    micros due = 0;
    micros at = 0;
    std::uint32_t attempt = 1;
};
/// The event of a line with "event", "id", "due" and "at"; nothing for any
/// other line ("ready", "stopped", a line cut short at the end of a log).
std::optional<worker_event> read_event(std::string_view line);

/// One line of soak_publish's log: `N DUE_EPOCH_S FAILS`, a job confirmed
/// by the broker: soak-N, due then, its header x-echo-fail = FAILS.
struct published_job {
    std::uint64_t number = 0;
    micros due = 0;
    std::uint32_t fails = 0;
};
std::optional<published_job> read_published(std::string_view line);
std::string published_line(const published_job& j);

}  // namespace soak
