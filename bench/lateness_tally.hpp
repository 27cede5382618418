// What compare_bench makes of the job starts a contender reported: the
// lateness (handler start - due time) of the jobs that count, those not
// started within a grace period of their due time (censored: "not run
// within N s"), early and duplicate starts, and the rate of starts. Pure:
// no broker, no clock (unit-tested in tests/unit/compare).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cbench {

/// One handler start: the job's message id, when its handler started and
/// its due time (epoch seconds; no due time for a job due now).
struct job_start {
    std::string id;
    double start_s = 0;
    std::optional<double> due_s;
};

/// A line "run ID START DUE" (DUE "-" for none) as the external contenders
/// print it (bench/naive_sleep_consumer.py, bench/celery_eta_bench.py);
/// nothing for any other line.
std::optional<job_start> parse_start_line(std::string_view line);

/// The jobs of a scenario that count: ids prefix + 0 .. prefix + (count-1).
struct counted_jobs {
    std::string prefix;
    std::size_t count = 0;
    /// A job started later than this after its due time counts as not run
    /// (the run's deadline is the last due time plus this).
    double grace_s = 0;
    /// Whether `id` is one of them.
    bool counts(std::string_view id) const;
};

struct tally {
    std::size_t expected = 0;
    std::vector<double> late_ms;  ///< start - due of the jobs started in time, in start order
    std::size_t not_run = 0;      ///< not started within grace_s of their due time (or not at all)
    std::size_t early = 0;        ///< started before their due time
    std::size_t duplicates = 0;   ///< further starts of a job already counted
    std::size_t started = 0;      ///< jobs that count started at all (a duplicate once)
    double first_start_s = 0, last_start_s = 0;  ///< over the jobs that count
};

/// Tallies `starts` (any order; other ids ignored) against `jobs`.
tally tally_starts(std::vector<job_start> starts, const counted_jobs& jobs);

/// Jobs started per second from the first start to the last, over the
/// jobs that count; 0 with fewer than two starts.
double start_rate(const tally& t);

}  // namespace cbench
