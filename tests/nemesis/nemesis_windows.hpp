// Fault windows: when a fault may explain what the workers' events show,
// and what a worker's clock said under a clock step, in real time.
//
// A fault's window runs from its start to its end, or to the last time its
// worker consumed again when later, plus a grace (recovery takes time:
// reconnects, redeliveries, a backlog). A fault that targets a worker
// explains only that worker's runs; a node's fault, any worker's.
#pragma once

#include "nemesis_records.hpp"

#include <optional>
#include <vector>

namespace nemesis {

class fault_windows {
public:
    fault_windows(std::vector<fault> faults, micros grace);

    /// Whether a fault's window meets [from, to]. With `worker`, a fault
    /// that targets another worker does not count.
    bool meets(micros from, micros to, std::optional<unsigned> worker = std::nullopt) const;
    /// Whether a clock step of `worker` was on at (real) time `t`.
    bool clock_stepped(unsigned worker, micros t) const;
    /// A time `worker` wrote, in real time: less the step of a clock step
    /// (with a known step) that was on then.
    micros real_time(unsigned worker, micros written) const;

private:
    std::vector<fault> faults_;
    micros grace_;
};

}  // namespace nemesis
