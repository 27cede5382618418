// Fault windows (see nemesis_windows.hpp).
#include "nemesis_windows.hpp"

#include <algorithm>
#include <utility>

namespace nemesis {

fault_windows::fault_windows(std::vector<fault> faults, micros grace) : faults_(std::move(faults)), grace_(grace) {}

bool fault_windows::meets(micros from, micros to, std::optional<unsigned> worker) const {
    return std::any_of(faults_.begin(), faults_.end(), [&](const fault& f) {
        if (worker && targets_worker(f.kind) && f.target != *worker) return false;
        micros last = f.end;
        for (const micros t : f.consumed_again) last = std::max(last, t);
        return f.start <= to && from <= last + grace_;
    });
}

bool fault_windows::clock_stepped(unsigned worker, micros t) const {
    return std::any_of(faults_.begin(), faults_.end(), [&](const fault& f) {
        return f.kind == fault_kind::clock_step && f.target == worker && f.start <= t && t <= f.end;
    });
}

micros fault_windows::real_time(unsigned worker, micros written) const {
    for (const auto& f : faults_) {
        if (f.kind != fault_kind::clock_step || f.target != worker || !f.step) continue;
        const micros real = written - *f.step;
        if (f.start <= real && real <= f.end) return real;
    }
    return written;
}

}  // namespace nemesis
