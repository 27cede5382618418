// The soak's ledger: every job published, and what became of it by the
// worker's events. Nothing lost means each job succeeded, or was
// dead-lettered when it was meant to be (it fails on every attempt the
// worker allows); never early means no run started before its due time.
#pragma once

#include "soak_events.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace soak {

struct ledger_result {
    std::size_t published = 0;
    std::size_t succeeded = 0;             ///< jobs that succeeded as meant
    std::size_t dead_as_meant = 0;         ///< jobs dead-lettered as meant
    std::size_t lost = 0;                  ///< neither succeeded nor dead-lettered
    std::size_t wrong_end = 0;             ///< succeeded when meant to die, or the other way
    std::size_t runs = 0;                  ///< run events of published jobs
    std::size_t extra_runs = 0;            ///< runs beyond those the job's failures call for
    std::size_t early = 0;                 ///< runs that started before their due time
    std::size_t due_changed = 0;           ///< first runs whose due is not the published one
    std::size_t unknown = 0;               ///< events of jobs not in the log of published jobs
    /// Nothing lost, nothing early, no job ended otherwise than meant, no
    /// run more than meant, no event of an unknown job.
    bool clean() const {
        return lost == 0 && wrong_end == 0 && extra_runs == 0 && early == 0 && due_changed == 0 &&
               unknown == 0;
    }
};

class ledger {
public:
    /// `max_attempts`: the worker's (--max-attempts): a job with
    /// x-echo-fail ≥ it is meant to be dead-lettered after that many runs.
    explicit ledger(std::uint32_t max_attempts) : max_attempts_(max_attempts) {}
    void publish(const published_job& j);
    void add(const worker_event& e);
    ledger_result result() const;

private:
    struct job {
        bool published = false;
        std::uint32_t fails = 0;
        micros due = 0;
        std::uint32_t runs = 0, succeeded = 0, dead = 0;
        bool due_changed = false;
    };
    std::uint32_t max_attempts_;
    std::vector<job> jobs_;
    std::size_t early_ = 0;
    std::size_t unknown_ = 0;
};

}  // namespace soak
