// The scenarios of compare_bench as plans every contender is given alike:
// which jobs to publish, in which order, due when, and which of them count.
//
// - L: `jobs` jobs due uniformly over [2 s, 12 s] after publishing begins
//   (fixed seed), published in random order.
// - H: `far` jobs due `far_due` after publishing begins, then, once they are
//   published, 50 near jobs due 2 s later; only the near jobs count.
// - T: `jobs` jobs due now (no due time), published before the contender
//   starts consuming.
#pragma once

#include "lateness_tally.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cbench {

struct plan_job {
    std::string id;
    std::optional<std::chrono::milliseconds> delay;  ///< due this long after its phase began; none: due now
};

struct plan {
    std::string name;                        ///< "L", "H-500", "T"
    std::vector<std::vector<plan_job>> phases;  ///< each published after the one before it is confirmed
    bool prefill = false;                    ///< published before the contender consumes (T)
    counted_jobs counted;
    /// T: how long the contender may take for all of them.
    std::chrono::seconds time_limit{120};
};

plan lateness_plan(std::size_t jobs, std::chrono::milliseconds from, std::chrono::milliseconds to,
                   double grace_s);
plan head_of_line_plan(std::size_t far, std::chrono::seconds far_due, double grace_s);
plan throughput_plan(std::size_t jobs);

/// The latest due time of the jobs that count (epoch seconds), given when
/// each phase began; none when they are due now. A run waits for them until
/// then plus the grace, not for the far jobs of H.
std::optional<double> last_counted_due(const plan& p, const std::vector<double>& phase_began_s);

/// The plan as bench/celery_eta_bench.py reads it: "prefill" or "live",
/// then "PHASE ID DELAY_S" a line ("-": due now).
std::string plan_text(const plan& p);

}  // namespace cbench
