// Clocks as the scheduling core sleeps on them. The time points themselves
// (steady_time, wall_time) and to_steady() are tarry/time/time_points.hpp.
//
// A clock source is a small copyable value that delay_queue and worker_pool
// take by value: it says what time it is and supplies the condition variable
// they sleep on. steady_clock_source is the real one; fake_clock
// (tarry/schedule/fake_clock.hpp) is the one unit tests drive.
#pragma once

#include "tarry/time/time_points.hpp"

#include <chrono>
#include <concepts>
#include <condition_variable>
#include <mutex>

namespace tarry {

/// What delay_queue and worker_pool need from a clock:
/// - now(): a steady_time that never goes backwards (copies of one clock
///   agree);
/// - wall_now(): the wall-clock time at about the same instant;
/// - condition_variable: constructible from the clock; wait(lock) and
///   wait_until(lock, steady_time) sleep with the std::mutex `lock` held on
///   entry and on return, may return early (spuriously), and must return once
///   now() reaches the deadline or after a notify_one()/notify_all() that
///   happens after the waiter released the lock.
template <class C>
concept clock_source =
    std::copy_constructible<C> && time_source<C> &&
    requires(const C& c, typename C::condition_variable& cv, std::unique_lock<std::mutex>& lock,
             steady_time t) {
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
    /// std::chrono::steady_clock::now().
    steady_time now() const noexcept { return std::chrono::steady_clock::now(); }
    /// std::chrono::system_clock::now().
    wall_time wall_now() const noexcept { return std::chrono::system_clock::now(); }

    /// std::condition_variable; wait_until() sleeps in the kernel on the
    /// monotonic clock (no polling).
    class condition_variable {
    public:
        /// The real clock has no state to keep.
        explicit condition_variable(const steady_clock_source&) noexcept {}
        /// Sleeps until notified (or spuriously), `lock` released meanwhile.
        void wait(std::unique_lock<std::mutex>& lock) { cv_.wait(lock); }
        /// Sleeps until `deadline`, a notify, or spuriously.
        void wait_until(std::unique_lock<std::mutex>& lock, steady_time deadline) {
            cv_.wait_until(lock, deadline);
        }
        /// Wakes one waiter.
        void notify_one() noexcept { cv_.notify_one(); }
        /// Wakes every waiter.
        void notify_all() noexcept { cv_.notify_all(); }

    private:
        std::condition_variable cv_;
    };
};

}  // namespace tarry
