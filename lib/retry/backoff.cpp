#include "tarry/retry/backoff.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>

namespace tarry::retry {
namespace {


// Converts a non-negative double of milliseconds, clamped to [0, cap].
duration clamp_ms(double ms, duration cap) {
    const double c = static_cast<double>(cap.count());
    if (!(ms > 0)) return duration{0};  // also NaN
    if (ms >= c) return cap;
    return duration{static_cast<duration::rep>(ms)};
}

double unit(random_source& random) {
    const double u = random ? random() : 0.0;
    if (!(u >= 0.0)) return 0.0;
    return u < 1.0 ? u : std::nextafter(1.0, 0.0);
}

}  // namespace

random_source make_random_source(std::uint64_t seed) {
    if (seed == 0) seed = (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
    return [engine = std::mt19937_64(seed), dist = std::uniform_real_distribution<double>(0.0, 1.0)]() mutable {
        return dist(engine);
    };
}

backoff_policy backoff_policy::fixed(duration delay) {
    backoff_policy p;
    p.kind = shape::fixed;
    p.base = delay;
    p.cap = std::max(delay, p.cap);
    return p;
}

backoff_policy backoff_policy::exponential(duration base, double factor, duration cap) {
    backoff_policy p;
    p.kind = shape::exponential;
    p.base = base;
    p.factor = factor < 1.0 ? 1.0 : factor;
    p.cap = cap;
    return p;
}

backoff_policy backoff_policy::custom(std::function<duration(unsigned, random_source&)> delay,
                                      duration cap) {
    backoff_policy p;
    p.kind = shape::custom;
    p.custom_delay = std::move(delay);
    p.cap = cap;
    return p;
}

backoff_policy backoff_policy::with_jitter(jitter j) const {
    backoff_policy p = *this;
    p.spread = j;
    return p;
}

backoff_policy backoff_policy::with_max_attempts(unsigned n) const {
    backoff_policy p = *this;
    p.max_attempts = n;
    return p;
}

backoff_policy backoff_policy::with_max_total(duration d) const {
    backoff_policy p = *this;
    p.max_total = d;
    return p;
}

backoff_policy backoff_policy::celery_defaults() {
    return exponential(std::chrono::seconds(1), 2.0, std::chrono::seconds(600))
        .with_jitter(jitter::full)
        .with_max_attempts(4);
}

backoff_policy backoff_policy::sidekiq_defaults() {
    return custom([](unsigned n, random_source& random) {
               const double c = n - 1.0;
               const double rand10 = std::floor(unit(random) * 10.0);
               const double seconds = c * c * c * c + 15.0 + rand10 * (c + 1.0);
               return std::chrono::duration_cast<duration>(
                   std::chrono::duration<double>(seconds));
           })
        .with_max_attempts(26);
}

backoff_policy backoff_policy::job_defaults() {
    return exponential(std::chrono::seconds(1), 2.0, std::chrono::hours(1))
        .with_jitter(jitter::equal)
        .with_max_attempts(10);
}

backoff_policy backoff_policy::reconnect_defaults() {
    return exponential(std::chrono::milliseconds(100), 2.0, std::chrono::seconds(30))
        .with_jitter(jitter::full);
}

duration delay_after(const backoff_policy& p, unsigned failed_attempt, duration previous,
                     random_source& random) {
    const unsigned n = std::max(failed_attempt, 1u);
    double d = 0;  // milliseconds, before jitter
    switch (p.kind) {
    case shape::fixed: d = static_cast<double>(p.base.count()); break;
    case shape::exponential:
        // pow overflows to +inf for large n; clamp_ms caps it.
        d = static_cast<double>(p.base.count()) * std::pow(std::max(p.factor, 1.0), n - 1.0);
        break;
    case shape::custom:
        d = p.custom_delay ? static_cast<double>(p.custom_delay(n, random).count()) : 0.0;
        break;
    }
    const double cap = static_cast<double>(p.cap.count());
    d = std::min(d, cap);
    switch (p.spread) {
    case jitter::none: break;
    case jitter::full: d = unit(random) * d; break;
    case jitter::equal: d = d / 2.0 + unit(random) * (d / 2.0); break;
    case jitter::decorrelated: {
        const double lo = static_cast<double>(p.base.count());
        const double prev = n == 1 || previous.count() <= 0 ? lo : static_cast<double>(previous.count());
        const double hi = std::max(lo, prev * 3.0);
        d = lo + unit(random) * (hi - lo);
        break;
    }
    }
    return clamp_ms(d, p.cap);
}

retry_decision decide(const backoff_policy& p, unsigned failed_attempt, duration elapsed,
                      duration previous, random_source& random) {
    retry_decision out;
    if (p.max_attempts != 0 && failed_attempt >= p.max_attempts) {
        out.reason = "max attempts (" + std::to_string(p.max_attempts) + ") reached";
        return out;
    }
    out.delay = delay_after(p, failed_attempt, previous, random);
    if (p.max_total.count() > 0 && elapsed + out.delay > p.max_total) {
        out.reason = "max total time (" + std::to_string(p.max_total.count()) +
                     " ms) would be passed";
        out.delay = duration{0};
        return out;
    }
    out.retry = true;
    return out;
}

}  // namespace tarry::retry
