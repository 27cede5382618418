// The nemesis checker's judgement of a run: one verdict per promise over
// the publisher's ledger, the fault log and the workers' streams. Pure: no
// I/O, no clock (every time comes from the inputs: a run's start is its
// "at", corrected for a clock step of its worker when the fault log gives
// the step).
//
// Each verdict counts violations, how many of them are inside a fault
// window (nemesis_windows.hpp; a worker's fault counts for that worker's
// runs only) and how many no fault explains:
//   lost          a ledger job, not cancelled, that did not end as meant
//                 (succeeded; dead-lettered when it fails on every allowed
//                 attempt). Never explained.
//   early         a run started before its due time. Explained by a clock
//                 step of its worker.
//   after-cancel  a run started later than its cancel's confirm + margin
//                 (a rescheduled job's older copy, a removed schedule's
//                 occurrence too). Explained inside a fault window (from the
//                 confirm to the run): the consumer may not have been
//                 attached to the control stream.
//   chain-gap     a nominal time the chain should have run and never did.
//                 Never explained.
//   chain-fork    a nominal time run more than once after its predecessor
//                 was too: two copies of the chain. Never explained.
//   duplicate     a copy of a job (id, attempt, due) run more than once, an
//                 occurrence's first repeat included. Explained when a fault
//                 of the first run's worker, or a node's, meets the span
//                 from the first run's start to the repeat's.
//   late          a run started more than `late` after its due time.
//                 Explained when a fault meets the span from due to start.
//   crash         a worker's life that ended without its "stopped" line.
//                 Explained (and inside) when matched by a worker-kill of
//                 that worker between its last event and its restart.
#pragma once

#include "nemesis_records.hpp"

#include <array>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace nemesis {

struct options {
    /// The workers' --max-attempts: a job that fails this often is meant
    /// to be dead-lettered.
    std::uint32_t max_attempts = 10;
    /// How long a fault's window lasts after it healed (or its worker
    /// consumed again).
    micros grace = 30'000'000;
    /// Jobs due, and nominal times, within this of the streams' last event
    /// are not judged lost or missing (they may still be under way).
    micros settle = 10'000'000;
    /// A run later than this after its due time is late.
    micros late = 1'000'000;
    /// A cancel is read within this of its confirm (docs/control.md).
    micros cancel_margin = 100'000;
};

/// One promise's count; examples of unexplained violations (at most 5).
struct verdict {
    explicit verdict(std::string n) : name(std::move(n)) {}

    std::string name;
    std::size_t count = 0;
    std::size_t inside = 0;
    std::size_t unexplained = 0;
    std::vector<std::string> examples;

    void add(bool in_window, bool explained, std::string example);
    /// "verdict NAME: N (M inside fault windows, K unexplained)".
    std::string line() const;
};

/// The verdicts of a run, and what was checked.
struct report {
    verdict lost{"lost"};
    verdict early{"early"};
    verdict after_cancel{"after-cancel"};
    verdict chain_gap{"chain-gap"};
    verdict chain_fork{"chain-fork"};
    verdict duplicate{"duplicate"};
    verdict late{"late"};
    verdict crash{"crash"};
    std::size_t jobs = 0;     ///< ledger jobs judged, and occurrences seen
    std::size_t runs = 0;     ///< run events
    std::size_t faults = 0;
    std::size_t pending = 0;  ///< ledger jobs due too close to the end to judge

    std::array<const verdict*, 8> all() const;
    /// Every verdict's line (and its examples, indented), then
    /// "checked N jobs, M runs, F faults".
    std::string text() const;
    /// 0 when no verdict has an unexplained violation, else 1.
    int exit_code() const;
};

report judge(const ledger& ledger, const std::vector<fault>& faults, const std::vector<worker_stream>& streams,
             const options& o = {});

}  // namespace nemesis
