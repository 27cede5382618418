// Time as the scheduling core sees it.
//
// Due times are std::chrono::steady_clock time points inside the core, so a
// step of the wall clock (NTP, a person setting the date) never fires a job
// early or late. Wall-clock (epoch) times from the outside are converted once,
// at the edge, by to_steady().
//
// A clock source is a small copyable value that delay_queue and worker_pool
// take by value: it says what time it is and supplies the condition variable
// they sleep on. steady_clock_source is the real one; fake_clock
// (tarry/schedule/fake_clock.hpp) is the one unit tests drive.
#pragma once

#include <chrono>
#include <concepts>
#include <condition_variable>
#include <mutex>

namespace tarry {

/// A due time inside the core.
using steady_time = std::chrono::steady_clock::time_point;
/// A due time as the outside world states it (seconds since the Unix epoch).
using wall_time = std::chrono::system_clock::time_point;

// What delay_queue and worker_pool need from a clock:
// - now(): a steady_time that never goes backwards (copies of one clock
//   agree);
// - wall_now(): the wall-clock time at about the same instant;
// - condition_variable: constructible from the clock; wait(lock) and
//   wait_until(lock, steady_time) sleep with the std::mutex `lock` held on
//   entry and on return, may return early (spuriously), and must return once
//   now() reaches the deadline or after a notify_one()/notify_all() that
//   happens after the waiter released the lock.
template <class C>
concept clock_source =
    std::copy_constructible<C> &&
    requires(const C& c, typename C::condition_variable& cv, std::unique_lock<std::mutex>& lock,
             steady_time t) {
        { c.now() } -> std::same_as<steady_time>;
        { c.wall_now() } -> std::same_as<wall_time>;
        typename C::condition_variable;
        requires std::constructible_from<typename C::condition_variable, const C&>;
        cv.wait(lock);
        cv.wait_until(lock, t);
        cv.notify_one();
        cv.notify_all();
    };

/// The real clock: std::chrono::steady_clock and system_clock. Stateless,
/// thread-safe, free to copy.
struct steady_clock_source {
    steady_time now() const noexcept { return std::chrono::steady_clock::now(); }
    wall_time wall_now() const noexcept { return std::chrono::system_clock::now(); }

    /// std::condition_variable; wait_until() sleeps in the kernel on the
    /// monotonic clock (no polling).
    class condition_variable {
    public:
        explicit condition_variable(const steady_clock_source&) noexcept {}
        void wait(std::unique_lock<std::mutex>& lock) { cv_.wait(lock); }
        void wait_until(std::unique_lock<std::mutex>& lock, steady_time deadline) {
            cv_.wait_until(lock, deadline);
        }
        void notify_one() noexcept { cv_.notify_one(); }
        void notify_all() noexcept { cv_.notify_all(); }

    private:
        std::condition_variable cv_;
    };
};

namespace detail {
// base + (to - from), saturating instead of overflowing.
inline steady_time shift(steady_time base, wall_time to, wall_time from) noexcept {
    using rep = steady_time::duration::rep;
    using ns = steady_time::duration;
    const rep t = std::chrono::duration_cast<ns>(to.time_since_epoch()).count();
    const rep f = std::chrono::duration_cast<ns>(from.time_since_epoch()).count();
    const rep b = base.time_since_epoch().count();
    rep delta = 0;
    rep out = 0;
    if (__builtin_sub_overflow(t, f, &delta) || __builtin_add_overflow(b, delta, &out))
        return t > f ? steady_time::max() : steady_time::min();
    return steady_time(ns(out));
}
}  // namespace detail

/// Converts a wall-clock due time to the clock's steady time, reading both
/// clocks once. A job due in the past stays in the past (it is due at once).
/// Call it once per job, where the time enters the core; never store wall
/// times inside.
/// Times too far out for steady_time saturate at its min() / max().
template <clock_source Clock>
steady_time to_steady(const Clock& clock, wall_time due) {
    return detail::shift(clock.now(), due, clock.wall_now());
}

}  // namespace tarry
