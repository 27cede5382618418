// The soak's table: one row per sampling interval (a minute by default) of
// the runs started in it (lateness p50 / p99 / max), the retries, parked
// jobs and dead letters of that interval, and the worker's RSS sampled at
// its end; and the flat criteria judged on it.
#pragma once

#include "soak_events.hpp"

#include <cstddef>
#include <optional>
#include <vector>

namespace soak {

/// The worker's resident set size and the machine's load average, sampled
/// at `at`.
struct rss_sample {
    micros at = 0;
    long rss_kb = 0;
    double load1 = 0;
};

/// Interval k (from 1) covers [start + (k-1)·interval, start + k·interval).
struct interval_row {
    std::size_t index = 0;
    std::size_t runs = 0;
    double p50_ms = 0, p99_ms = 0, max_ms = 0;  ///< lateness (at - due); 0 without runs
    std::size_t retries = 0, parked = 0, dead = 0;
    std::optional<long> rss_kb;                 ///< the sample nearest the interval's end
    std::optional<double> load1;
};

/// The value at nearest rank q (0 < q ≤ 1) of `values` (unsorted; 0 when
/// empty): the smallest value with at least q of them at or below it.
double nearest_rank(std::vector<double> values, double q);

class interval_table {
public:
    interval_table(micros start, micros interval, std::size_t rows);
    /// A run counts its lateness in the interval it started in; retry,
    /// parked and dead count where they happened; events outside the rows
    /// (before start, after the last row) are left out.
    void add(const worker_event& e);
    /// Goes to the row whose end is nearest `s.at` (a sample taken at
    /// start + k·interval is row k's); outside the rows it is left out.
    void add(const rss_sample& s);
    std::vector<interval_row> rows() const;

private:
    std::optional<std::size_t> row_of(micros t) const;
    micros start_, interval_;
    std::vector<std::vector<double>> lateness_ms_;
    std::vector<interval_row> rows_;
};

/// The flat criteria: RSS at the last row ≤ 1.1 × RSS at the end of the
/// baseline (the first sixth of the rows: 10 of 60 minutes), and every
/// row's p99 ≤ 2 × the median p99 of the baseline rows. A row without runs
/// or without an RSS sample where one is needed fails.
struct flatness {
    std::size_t baseline_rows = 0;
    std::optional<long> rss_baseline_kb, rss_last_kb;
    bool rss_flat = false;
    double p99_baseline_ms = 0;       ///< median p99 of the baseline rows
    double p99_limit_ms = 0;          ///< 2 × that
    std::vector<std::size_t> rows_over;  ///< rows (index) above the limit or without runs
    bool p99_flat = false;
};
inline constexpr double rss_growth_limit = 1.1;
inline constexpr double p99_growth_limit = 2.0;
flatness judge(const std::vector<interval_row>& rows);

}  // namespace soak
