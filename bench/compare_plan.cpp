// compare_bench's scenarios as plans (see compare_plan.hpp).
#include "compare_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

namespace cbench {

namespace {
/// Fixed seed: every contender, and every run, does the same work.
constexpr std::uint64_t seed = 20261126;
}  // namespace

plan lateness_plan(std::size_t jobs, std::chrono::milliseconds from, std::chrono::milliseconds to,
                   double grace_s) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<long> within_us(from.count() * 1000, to.count() * 1000);
    std::vector<std::size_t> order(jobs);
    std::iota(order.begin(), order.end(), 0);
    std::vector<std::chrono::microseconds> offset(jobs);
    for (auto& o : offset) o = std::chrono::microseconds(within_us(rng));
    std::shuffle(order.begin(), order.end(), rng);
    plan p;
    p.name = "L";
    p.phases.emplace_back();
    for (auto i : order)
        p.phases[0].push_back({"L" + std::to_string(i), std::chrono::ceil<std::chrono::milliseconds>(offset[i])});
    p.counted = {"L", jobs, grace_s};
    return p;
}

plan head_of_line_plan(std::size_t far, std::chrono::seconds far_due, double grace_s) {
    constexpr std::size_t near = 50;
    plan p;
    p.name = "H-" + std::to_string(far);
    p.phases.resize(2);
    for (std::size_t i = 0; i < far; ++i) p.phases[0].push_back({"F" + std::to_string(i), far_due});
    for (std::size_t i = 0; i < near; ++i) p.phases[1].push_back({"N" + std::to_string(i), std::chrono::seconds(2)});
    p.counted = {"N", near, grace_s};
    return p;
}

plan throughput_plan(std::size_t jobs) {
    plan p;
    p.name = "T";
    p.prefill = true;
    p.phases.emplace_back();
    for (std::size_t i = 0; i < jobs; ++i) p.phases[0].push_back({"T" + std::to_string(i), std::nullopt});
    p.counted = {"T", jobs, 0};
    return p;
}

std::optional<double> last_counted_due(const plan& p, const std::vector<double>& phase_began_s) {
    std::optional<double> last;
    for (std::size_t k = 0; k < p.phases.size() && k < phase_began_s.size(); ++k)
        for (const auto& j : p.phases[k])
            if (j.delay && p.counted.counts(j.id)) {
                const double due = phase_began_s[k] + static_cast<double>(j.delay->count()) / 1000;
                last = std::max(last.value_or(due), due);
            }
    return last;
}

std::string plan_text(const plan& p) {
    std::string out = p.prefill ? "prefill\n" : "live\n";
    char buf[64];
    for (std::size_t k = 0; k < p.phases.size(); ++k)
        for (const auto& j : p.phases[k]) {
            if (j.delay)
                std::snprintf(buf, sizeof buf, " %.3f\n", static_cast<double>(j.delay->count()) / 1000);
            else
                std::snprintf(buf, sizeof buf, " -\n");
            out += std::to_string(k) + " " + j.id + buf;
        }
    return out;
}

}  // namespace cbench
