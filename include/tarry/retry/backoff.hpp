// Backoff policies: how long to wait before the next attempt.
//
// A policy is a plain value (copyable, no globals, no clocks): the delay is a
// pure function of the number of failed attempts, the previous delay and a
// random source the caller injects, so tests can check exact sequences. The
// same type serves job retries and reconnects.
//
// Attempts are counted from 1: attempt 1 is the first run. After attempt n
// fails, decide(policy, n, …) says whether attempt n+1 may run and after
// what delay.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace tarry::retry {

/// Delays and times of this layer: milliseconds.
using duration = std::chrono::milliseconds;

/// Uniform random numbers in [0, 1). A source is called from one thread at a
/// time; give each thread its own.
using random_source = std::function<double()>;

/// A source backed by its own 64-bit Mersenne Twister, seeded from `seed`
/// (or from std::random_device when seed is 0).
random_source make_random_source(std::uint64_t seed = 0);

/// How randomness spreads the computed delay d (see AWS's "Exponential
/// Backoff and Jitter" for the names).
enum class jitter {
    none,         ///< d
    full,         ///< uniform in [0, d)
    equal,        ///< d/2 + uniform in [0, d/2)
    /// uniform in [base, 3 × previous delay), then capped; the previous
    /// delay of the first retry is `base`
    decorrelated
};

/// The shape of the delay before jitter, for n = the failed attempt number.
enum class shape {
    fixed,        ///< base
    exponential,  ///< base × factor^(n−1), capped at `cap`
    custom        ///< custom_delay(n, random), capped at `cap`
};

/// How long to wait before the next attempt, and when to stop: a shape, a
/// cap, jitter and limits. A plain value (see this header's opening
/// comment); start from fixed(), exponential(), custom() or a preset.
struct backoff_policy {
    /// The shape of the delay before jitter. Default exponential.
    shape kind = shape::exponential;
    /// First delay (exponential), every delay (fixed), floor (decorrelated).
    duration base = std::chrono::seconds(1);
    /// Growth per attempt for exponential; must be ≥ 1.
    double factor = 2.0;
    /// No delay exceeds this (after jitter too).
    duration cap = std::chrono::minutes(10);
    /// How randomness spreads the delay. Default none.
    jitter spread = jitter::none;
    /// Attempts in all, the first run included; 0 = unlimited.
    unsigned max_attempts = 0;
    /// No attempt starts later than this after the first one began; 0 = unlimited.
    duration max_total{0};
    /// For shape::custom: the delay after failed attempt n (≥ 1).
    std::function<duration(unsigned n, random_source& random)> custom_delay;

    /// base every time.
    static backoff_policy fixed(duration delay);
    /// base × factor^(n−1), capped.
    static backoff_policy exponential(duration base, double factor, duration cap);
    /// Any function of the attempt number (and the random source), capped.
    static backoff_policy custom(std::function<duration(unsigned, random_source&)> delay,
                                 duration cap = std::chrono::hours(24 * 30));

    /// A copy with `spread` = j.
    backoff_policy with_jitter(jitter j) const;
    /// A copy with `max_attempts` = n.
    backoff_policy with_max_attempts(unsigned n) const;
    /// A copy with `max_total` = d.
    backoff_policy with_max_total(duration d) const;

    /// Celery's autoretry with retry_backoff=True, retry_backoff_max=600,
    /// retry_jitter=True, max_retries=3: 1 s, 2 s, 4 s … capped at 600 s,
    /// full jitter, 4 attempts in all.
    static backoff_policy celery_defaults();
    /// Sidekiq's default: (c⁴ + 15 + rand(10) × (c + 1)) seconds with
    /// c = n − 1 after the n-th failure (15–24 s first), 25 retries
    /// (26 attempts in all), no cap beyond the formula's.
    static backoff_policy sidekiq_defaults();
    /// tarry's default for jobs: 1 s × 2^(n−1), capped at 1 h, equal jitter
    /// (never less than half the computed delay), 10 attempts.
    static backoff_policy job_defaults();
    /// tarry's default for reconnects: 100 ms × 2^(n−1), capped at 30 s, full
    /// jitter, unlimited attempts.
    static backoff_policy reconnect_defaults();
};

/// What to do after a failed attempt.
struct retry_decision {
    bool retry = false;  ///< false: attempts or time exhausted
    duration delay{0};   ///< wait this long before the next attempt (when retry)
    std::string reason;  ///< when !retry: "max attempts (N) reached" or "max total time … reached"
};

/// The delay after failed attempt `failed_attempt` (≥ 1) before limits:
/// shape, cap and jitter applied. `previous` is the delay returned for the
/// attempt before (decorrelated jitter needs it; ignored otherwise).
duration delay_after(const backoff_policy& p, unsigned failed_attempt, duration previous,
                     random_source& random);

/// delay_after() plus the limits: `elapsed` is the time since the first
/// attempt began. A retry is refused when `failed_attempt` ≥ max_attempts or
/// when elapsed + delay would pass max_total.
retry_decision decide(const backoff_policy& p, unsigned failed_attempt, duration elapsed,
                      duration previous, random_source& random);

}  // namespace tarry::retry
