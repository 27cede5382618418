// The buckets of the consumer's histograms (tarry/consumer/consumer_metrics.hpp).
#include "tarry/consumer/consumer_metrics.hpp"

#include <array>

namespace tarry {

namespace {
constexpr std::array<double, 18> lateness_bounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                    0.01,   0.025,   0.05,   0.1,   0.25,   0.5,
                                                    1,      2.5,     5,      10,    30,     60};
constexpr std::array<double, 18> duration_bounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                    1,     2.5,    5,     10,   30,    60,   120,  300,  600};
}  // namespace

std::span<const double> start_lateness_bounds() noexcept { return lateness_bounds; }
std::span<const double> handler_duration_bounds() noexcept { return duration_bounds; }

}  // namespace tarry
