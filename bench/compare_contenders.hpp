// The contenders of compare_bench, each given a plan (compare_plan.hpp) on
// a fresh queue of its own, deleted afterwards, and each reporting when
// every job's handler started:
// - tarry: the scheduling consumer with its defaults (its run events).
// - naive: bench/naive_sleep_consumer.py, pika sleeping until due in its
//   callback, prefetch 100.
// - Celery 5.2 ETA tasks: bench/celery_eta_bench.py with a worker of
//   Celery's defaults ("defaults") or with worker_prefetch_multiplier 1 and
//   task_acks_late ("prefetch1").
// - the binary delay cascade alone: publisher::async_publish_delayed into
//   a cascade of 17 levels of 1 ms (up to 131 s), a plain consumer (manual
//   acks, prefetch 100) on the destination queue; start = delivery.
// A run ends when every job that counts started, or at its deadline: the
// last due time plus the plan's grace (T: the plan's time limit).
#pragma once

#include "compare_plan.hpp"
#include "consumer_bench_support.hpp"

#include <string>
#include <vector>

namespace cbench {

struct contender_run {
    std::vector<job_start> starts;
    double publish_s = 0;  ///< publishing every phase, confirms (or the Celery runner's publishing) included
};

contender_run run_tarry(const context& cx, const plan& p);
contender_run run_naive(const context& cx, const plan& p);
/// `variant`: "defaults" or "prefetch1" (bench/celery_eta_app.py).
contender_run run_celery(const context& cx, const plan& p, const std::string& variant);
/// Not for plans without due times (a delay of 0 is a plain publish).
contender_run run_cascade(const context& cx, const plan& p);

/// The naive consumer's prefetch.
inline constexpr std::uint16_t naive_prefetch = 100;

}  // namespace cbench
