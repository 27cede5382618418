// A histogram of durations that any thread records into without a lock:
// one relaxed atomic per bucket, and the sum as whole nanoseconds in another.
// A snapshot (duration_histogram) may be a few observations apart between
// its buckets and its sum.
#pragma once

#include "tarry/consumer/consumer_metrics.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tarry::detail {

class duration_recorder {
public:
    /// `bounds`: ascending upper bounds in seconds, in static storage.
    explicit duration_recorder(std::span<const double> bounds);

    /// Counts d (a negative d as 0) in its bucket: O(log buckets). Adds at
    /// most max_summed to the sum, so that it cannot overflow in practice.
    void observe(std::chrono::nanoseconds d) noexcept;
    duration_histogram snapshot() const;

    static constexpr std::chrono::hours max_summed{24};

private:
    std::span<const double> bounds_;
    std::vector<std::int64_t> bound_ns_;  // bounds_ in nanoseconds
    std::unique_ptr<std::atomic<std::uint64_t>[]> counts_;
    std::atomic<std::uint64_t> sum_ns_{0};
};

}  // namespace tarry::detail
