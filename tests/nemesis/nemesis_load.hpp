// The nemesis run's load: one publisher (tarry::publisher over a connection
// that fails over between the cluster's nodes) that publishes a steady
// stream of delayed jobs (due from now up to a horizon ahead, never after
// the load's end), some failing once or twice (x-echo-fail) or on every
// attempt (dead-lettered), some sleeping in the handler (x-echo-sleep-ms);
// cancels and reschedules of jobs several seconds before they are due; and
// periodic schedules (every 1 s, a cron every minute, one every 2 s that is
// removed halfway). Each command goes to the ledger (nemesis_input.hpp's
// format) only once the broker confirmed it. A cancel, reschedule, upsert
// or removal that fails is repeated until confirmed (one that failed may
// still have taken effect: left out of the ledger it would look lost); a
// job whose publish failed is left out (it may run: the checker ignores
// runs of jobs it was not told about).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nemesis {

struct load_options {
    std::vector<std::string> urls;  ///< the publisher's, the first tried first
    std::string queue;
    double rate = 20;               ///< jobs a second
    std::chrono::milliseconds horizon{600'000};  ///< due at most this far ahead
    std::chrono::system_clock::time_point end;   ///< and never after this
    std::uint32_t max_attempts = 4;  ///< the workers': a job failing this often is dead-lettered
    std::uint64_t seed = 1;
};

struct load_counts {
    std::uint64_t published = 0, confirmed = 0, failed = 0;
    std::uint64_t cancels = 0, reschedules = 0, schedules = 0, unschedules = 0;
    std::uint64_t repeated = 0;  ///< commands repeated after a failure
    std::int64_t latest_due = 0;  ///< of every confirmed job and reschedule, epoch µs
};

class load {
public:
    load(load_options o, const std::string& ledger_path);
    ~load();
    load(const load&) = delete;
    load& operator=(const load&) = delete;

    /// Connects, upserts the schedules (each repeated until confirmed) and
    /// starts publishing; throws when it cannot connect within a minute.
    void start();
    /// Publishes no new job; waits up to `t` for every publish in flight to
    /// complete and every command to be confirmed.
    void stop(std::chrono::milliseconds t);
    load_counts counts() const;
    /// The confirmed jobs not cancelled: each should end (succeed, or be
    /// dead-lettered).
    std::vector<std::string> live_jobs() const;

private:
    struct impl;
    std::unique_ptr<impl> p_;
};

}  // namespace nemesis
