// How late the jobs of a nemesis run started, by the kind of fault they
// were due during: each copy's first run (attempt 1 of an id and due time;
// its start in real time, corrected for a clock step of its worker), in
// the bucket of every fault kind whose fault was on at its due time
// (start to heal), or in "none" when no fault was on then nor in the 30 s
// before. For the run's summary and docs/reliability.md; no verdict.
#pragma once

#include "nemesis_records.hpp"

#include <string>
#include <vector>

namespace nemesis {

struct lateness_row {
    std::string bucket;  ///< a fault kind's name, or "none"
    std::size_t runs = 0;
    double min_ms = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;  ///< min < 0: early (a clock step)
};

std::vector<lateness_row> lateness_by_fault(const std::vector<fault>& faults,
                                            const std::vector<worker_stream>& streams);

/// The rows as a small table, one line each.
std::string lateness_text(const std::vector<lateness_row>& rows);

}  // namespace nemesis
