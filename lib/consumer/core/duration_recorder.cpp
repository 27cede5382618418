#include "duration_recorder.hpp"

#include <algorithm>
#include <cmath>

namespace tarry::detail {

duration_recorder::duration_recorder(std::span<const double> bounds)
    : bounds_(bounds), counts_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds.size() + 1)) {
    bound_ns_.reserve(bounds.size());
    for (const double b : bounds) bound_ns_.push_back(std::llround(b * 1e9));
}

void duration_recorder::observe(std::chrono::nanoseconds d) noexcept {
    const std::int64_t ns = std::max<std::int64_t>(d.count(), 0);
    // counts[i]: observations <= bounds[i] and > bounds[i - 1].
    const auto i = static_cast<std::size_t>(std::lower_bound(bound_ns_.begin(), bound_ns_.end(), ns) - bound_ns_.begin());
    counts_[i].fetch_add(1, std::memory_order_relaxed);
    const auto capped = std::min<std::int64_t>(ns, std::chrono::nanoseconds(max_summed).count());
    sum_ns_.fetch_add(static_cast<std::uint64_t>(capped), std::memory_order_relaxed);
}

duration_histogram duration_recorder::snapshot() const {
    duration_histogram h;
    h.bounds = bounds_;
    h.counts.resize(bounds_.size() + 1);
    for (std::size_t i = 0; i < h.counts.size(); ++i) {
        h.counts[i] = counts_[i].load(std::memory_order_relaxed);
        h.count += h.counts[i];
    }
    h.sum_seconds = static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9;
    return h;
}

}  // namespace tarry::detail
