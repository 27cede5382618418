// A clock that only moves when a test says so.
//
// fake_clock is a clock_source (see clock.hpp) for unit tests: its time
// stands still until advance(), and its condition variable sleeps without a
// timer, so a thread blocked in delay_queue::pop() on a fake clock wakes
// exactly when a test advances the clock to its deadline - instantly, and
// never because real time went by. Tests need no sleeps: wait_for_sleepers()
// and wait_for_sleeps() tell when the threads under test have gone (back) to
// sleep.
//
// Copies share one time line (the state is reference-counted). Every member is
// thread-safe.
#pragma once

#include "tarry/schedule/clock.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace tarry {

namespace detail {
struct fake_clock_state;
struct fake_sleeper;
}

/// A clock_source for unit tests that only moves when a test says so;
/// copies share one time line, every member is thread-safe (see this
/// header's opening comment).
class fake_clock {
public:
    /// Starts at an arbitrary steady time and at wall time
    /// 2024-01-01T00:00:00Z.
    fake_clock();
    /// Starts at these times.
    fake_clock(steady_time steady_start, wall_time wall_start);

    /// The steady time: where advance() has brought it.
    steady_time now() const noexcept;
    /// The wall time: where advance() and step_wall() have brought it.
    wall_time wall_now() const noexcept;

    /// Moves both the steady and the wall time forward by d (d < 0 throws
    /// std::invalid_argument: steady time never goes back), then wakes every
    /// thread whose wait_until() deadline has come.
    void advance(std::chrono::nanoseconds d);

    /// Steps the wall time alone, by any amount (negative = back), as NTP or
    /// a person setting the date does. Steady time and sleepers are unaffected.
    void step_wall(std::chrono::nanoseconds d) noexcept;

    /// Wakes every sleeping thread without moving time: a spurious wake-up.
    void wake_all();

    /// How many threads are asleep on this clock's condition variables that
    /// nothing has woken yet (a woken thread counts again once it sleeps
    /// again).
    std::size_t sleepers() const;

    /// How many times a thread has gone to sleep on this clock, ever. A test
    /// that reads it, acts, and waits for it to grow knows that a sleeper
    /// was woken (by a notify) and went back to sleep.
    std::uint64_t sleeps() const;

    /// Blocks (in real time, at most real_timeout) until sleepers() >= n.
    /// Returns false on timeout, which in a test means a thread under test
    /// did not go back to sleep (it returned, or hangs busy).
    bool wait_for_sleepers(std::size_t n,
                           std::chrono::milliseconds real_timeout = std::chrono::seconds(5)) const;

    /// Blocks (in real time, at most real_timeout) until sleeps() >= n.
    bool wait_for_sleeps(std::uint64_t n,
                         std::chrono::milliseconds real_timeout = std::chrono::seconds(5)) const;

    /// The condition variable of this clock. A thread in wait() sleeps until
    /// notified; one in wait_until() also wakes when advance() reaches its
    /// deadline - and at no other time (wake_all() aside): no timer, no
    /// polling, no spurious wake-ups, so a test sees a missing notify as a
    /// thread that never wakes. notify_one() wakes the longest sleeper. It
    /// keeps the clock's state alive, so it may outlive the fake_clock it was
    /// made from. Not copyable.
    class condition_variable {
    public:
        /// Sleeps on `clock`'s time line (its state is shared, not copied).
        explicit condition_variable(const fake_clock& clock);
        ~condition_variable();
        condition_variable(const condition_variable&) = delete;
        condition_variable& operator=(const condition_variable&) = delete;

        /// Sleeps until notified (or wake_all()), `lock` released meanwhile.
        void wait(std::unique_lock<std::mutex>& lock);
        /// Returns at once when now() >= deadline; otherwise sleeps once.
        void wait_until(std::unique_lock<std::mutex>& lock, steady_time deadline);
        /// Wakes the longest sleeper on this condition variable.
        void notify_one();
        /// Wakes every sleeper on this condition variable.
        void notify_all();

    private:
        friend class fake_clock;
        friend struct detail::fake_clock_state;
        void sleep(std::unique_lock<std::mutex>& lock, const steady_time* deadline);

        void wake_if(bool (*pred)(const detail::fake_sleeper&, steady_time), steady_time now);

        std::shared_ptr<detail::fake_clock_state> state_;
        std::mutex mutex_;                          // guards sleepers_
        std::vector<detail::fake_sleeper*> sleepers_;  // oldest first
    };

private:
    std::shared_ptr<detail::fake_clock_state> state_;
};

}  // namespace tarry
