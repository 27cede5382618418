// delay_queue<T>: a thread-safe priority queue keyed by due time that hands
// an item out only once it is due (like Java's DelayQueue).
//
// Promises, for every member below unless it says otherwise:
// - Thread-safe: any thread may call any member at any time, except that the
//   destructor must not run while another thread is inside a member.
// - Never early: an item leaves through pop(), try_pop(), pop_until() or
//   pop_for() only when the queue's clock says its due time has come. (drain(),
//   take_latest() and remove_if() take items out regardless of due time; that
//   is their job.)
// - Order: earliest due time first; items with equal due times leave in the
//   order they were pushed (a push sequence number breaks ties).
// - Waiting threads sleep on the clock's condition variable (no polling). One
//   of them (the leader) sleeps with a timer for the earliest item; the others
//   sleep without one. A push of an item due sooner than every other item wakes
//   a sleeper so the timer is re-armed.
// - Bounded: push() refuses with push_result::full when the item would exceed
//   the count or byte limit; take_latest() makes room by taking the item due
//   last.
// - The fast path: push_ready() hands an item that is already due to the
//   next pop in arrival order, in O(1), without entering the due-time order;
//   a pop takes whichever of the ready path's oldest item and the earliest
//   held item is due first. Ready items count against the same bounds and
//   are seen by take_latest() (last), remove_if() and drain().
// - Listing: visit() shows a page of items in place order (the ready path
//   first, in arrival order, then the held items by due time, ties in push
//   order) after a given place, under the lock, in O(log n + page); a place
//   never changes while its item is queued, so paging on is stable while
//   items come and go.
// - close() wakes every waiter; afterwards pushes are refused and every pop
//   returns at once (empty). Items still held stay until drain().
// - Items are moved, never copied. T must be nothrow-movable.
//
// Why a mutex, a condition variable and a shallow tree of sorted blocks
// (rather than a binary heap, a min-max heap, or a lock-free inbox drained
// into a heap): see docs/delay-queue.md for the measurements.
#pragma once

#include "tarry/schedule/clock.hpp"
#include "tarry/schedule/detail/sorted_blocks.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <stop_token>
#include <type_traits>
#include <utility>
#include <vector>

namespace tarry {

/// What push() did with an item. On anything but ok the item was not taken:
/// the caller's object is left as it was.
enum class push_result {
    ok,         ///< queued
    full,       ///< the count or byte limit would be exceeded; try after making room
    too_large,  ///< bytes alone exceed the byte limit: it will never fit
    closed,     ///< the queue is closed
};

/// Bounds of a delay_queue. The defaults mean "no bound".
struct delay_queue_limits {
    std::size_t max_items = std::numeric_limits<std::size_t>::max();  ///< items held at most
    std::size_t max_bytes = std::numeric_limits<std::size_t>::max();  ///< their bytes at most
};

/// Counters and gauges of a delay_queue, read together under its lock.
struct delay_queue_stats {
    std::size_t items = 0;          ///< held now
    std::size_t bytes = 0;          ///< sum of the bytes of the items held now
    std::uint64_t pushed = 0;       ///< accepted by push() or push_ready() since construction
    std::uint64_t popped = 0;       ///< handed out due by a pop
    std::uint64_t refused = 0;      ///< push() calls answered full or too_large
    std::uint64_t taken_out = 0;    ///< left by take_latest(), remove_if() or drain()
};

/// An item with the due time and byte size it was pushed with.
template <class T>
struct due_item {
    T value;                ///< the item
    steady_time due;        ///< when it is due
    std::size_t bytes = 0;  ///< what it counts against the byte limit
};

/// An item's place in a delay_queue's listing order (visit()): the ready
/// path's items first, by push order (`seq`), then the held items by due
/// time (`due`, steady-clock ticks), ties by push order. Unique per item,
/// and fixed while the item is queued; opaque beyond that.
struct queue_place {
    bool ready = false;     ///< in the ready path (push_ready())
    std::int64_t due = 0;   ///< 0 for a ready item
    std::uint64_t seq = 0;  ///< push order
    /// The same place: the same item.
    friend bool operator==(const queue_place&, const queue_place&) = default;
    /// Listing order: ready items first, then by due time, ties by push order.
    friend bool operator<(const queue_place& a, const queue_place& b) noexcept {
        if (a.ready != b.ready) return a.ready;
        return a.due < b.due || (a.due == b.due && a.seq < b.seq);
    }
};

namespace detail {

template <class T>
struct queued {
    std::int64_t due;   // steady_time ticks (ns)
    std::uint64_t seq;  // push order: ties on due leave first-in first-out
    std::size_t bytes;
    T value;
};

// The order of items: due time, then push order. Unique per item.
struct due_key {
    std::int64_t due;
    std::uint64_t seq;
    friend bool operator<(const due_key& a, const due_key& b) noexcept {
        return a.due < b.due || (a.due == b.due && a.seq < b.seq);
    }
};

struct key_of_queued {
    template <class T>
    due_key operator()(const queued<T>& q) const noexcept {
        return {q.due, q.seq};
    }
};

struct earlier {
    template <class T>
    bool operator()(const queued<T>& a, const queued<T>& b) const noexcept {
        return key_of_queued{}(a) < key_of_queued{}(b);
    }
};

}  // namespace detail

/// A thread-safe priority queue keyed by due time that hands an item out
/// only once it is due: never early, earliest first, bounded, sleeping
/// without polling (see this header's opening comment for every promise).
template <class T, clock_source Clock = steady_clock_source>
class delay_queue {
    static_assert(std::is_nothrow_move_constructible_v<T> && std::is_nothrow_move_assignable_v<T>,
                  "delay_queue moves items while it reorders them; T's moves must not throw");

public:
    using value_type = T;      ///< what it holds
    using clock_type = Clock;  ///< the clock it sleeps on
    using item = due_item<T>;  ///< an item with its due time and bytes

    /// Empty, with these bounds, on this clock.
    explicit delay_queue(delay_queue_limits limits = {}, Clock clock = Clock{})
        : clock_(std::move(clock)), limits_(limits) {}

    /// Precondition: no thread is inside any member (join the consumers
    /// first; close() wakes them).
    ~delay_queue() = default;

    delay_queue(const delay_queue&) = delete;
    delay_queue& operator=(const delay_queue&) = delete;

    /// Queues value to be handed out at due (a time in the past means "at
    /// once"). bytes is what the item counts against the byte limit and in
    /// bytes(). Moves from value only when the result is ok. Throws only
    /// std::bad_alloc (then nothing changed).
    push_result push(T&& value, steady_time due, std::size_t bytes = 0) {
        bool wake = false;
        {
            std::lock_guard lock(mutex_);
            if (const auto refused = admit(bytes)) return *refused;
            const std::uint64_t seq = next_seq_++;
            items_.push(detail::queued<T>{due.time_since_epoch().count(), seq, bytes, std::move(value)});
            bytes_ += bytes;
            ++pushed_;
            publish_sizes();
            // A new earliest item: the leader's timer (if any) is too late.
            if (items_.min().seq == seq) {
                leader_ = 0;
                wake = waiters_ > 0;
            }
        }
        if (wake) cv_.notify_one();
        return push_result::ok;
    }

    /// As above, for a wall-clock due time: converted to steady time once,
    /// here (see to_steady()), so a later step of the wall clock does not move
    /// the job.
    push_result push(T&& value, wall_time due, std::size_t bytes = 0) {
        return push(std::move(value), to_steady(clock_, due), bytes);
    }

    /// The fast path for an item already due: queued in arrival order behind
    /// earlier ready items, in O(1), never entering the due-time order. `due`
    /// is the time it became due (reported back in due_item; a time in the
    /// future is treated as now). Same bounds, results and exception
    /// guarantee as push().
    push_result push_ready(T&& value, steady_time due, std::size_t bytes = 0) {
        bool wake = false;
        const push_result r = enqueue_ready(std::move(value), due, bytes, false, wake);
        if (wake) cv_.notify_one();
        return r;
    }

    /// As push_ready(), but wakes no waiting pop: for a producer that pushes
    /// a batch and then calls wake_ready() once, so that waiters are woken
    /// once per batch, not once per item. The item is visible to pops at
    /// once; until wake_ready(), a pop already asleep may not see it.
    push_result push_ready_quiet(T&& value, steady_time due, std::size_t bytes = 0) {
        bool unused = false;
        return enqueue_ready(std::move(value), due, bytes, true, unused);
    }

    /// Wakes as many waiting pops as items were pushed by push_ready_quiet()
    /// since the last call (all of them when there are at least as many items).
    void wake_ready() {
        std::size_t wake = 0;
        bool all = false;
        {
            std::lock_guard lock(mutex_);
            wake = std::min(unannounced_, waiters_);
            all = wake > 0 && wake == waiters_;
            unannounced_ = 0;
        }
        if (all) {
            cv_.notify_all();
            return;
        }
        for (std::size_t i = 0; i < wake; ++i) cv_.notify_one();
    }

    /// Blocks until the earliest item is due and returns it, or returns empty
    /// once the queue is closed.
    std::optional<item> pop() { return pop_impl(nullptr, nullptr); }

    /// As pop(); also returns empty as soon as stop is requested.
    std::optional<item> pop(std::stop_token stop) {
        if (!stop.stop_possible()) return pop_impl(nullptr, nullptr);
        if (auto it = try_pop_unless_stopped(stop)) return it;
        return pop_stoppable(nullptr, stop);
    }

    /// Returns the earliest item if it is due now, else empty. Never blocks
    /// beyond taking the lock.
    std::optional<item> try_pop() {
        const auto lock = lock_for_pop();
        if (closed_) return std::nullopt;
        return take_due();
    }

    /// As pop(), but gives up (returns empty) when the queue's clock reaches
    /// deadline, or when stop is requested.
    std::optional<item> pop_until(steady_time deadline, std::stop_token stop = {}) {
        if (!stop.stop_possible()) return pop_impl(&deadline, nullptr);
        if (auto it = try_pop_unless_stopped(stop)) return it;
        return pop_stoppable(&deadline, stop);
    }

    /// pop_until(now + timeout), the time measured on the queue's clock.
    template <class Rep, class Period>
    std::optional<item> pop_for(std::chrono::duration<Rep, Period> timeout, std::stop_token stop = {}) {
        const steady_time now = clock_.now();
        if (timeout <= timeout.zero()) return pop_until(now, std::move(stop));
        const auto room = steady_time::max() - now;
        // Compared in floating point: a huge timeout would overflow nanoseconds.
        const bool beyond = std::chrono::duration<double>(timeout) >= std::chrono::duration<double>(room);
        const auto wait = beyond ? room : std::chrono::ceil<steady_time::duration>(timeout);
        return pop_until(now + wait, std::move(stop));
    }

    /// Takes out the item due last (of equal due times, the one pushed last),
    /// due or not: the one to park when the queue is full. Empty if none.
    std::optional<item> take_latest() {
        std::lock_guard lock(mutex_);
        if (items_.empty() && ready_.empty()) return std::nullopt;
        auto q = items_.empty() ? take_ready_back() : items_.pop_max();
        bytes_ -= q.bytes;
        ++taken_out_;
        publish_sizes();
        return release(std::move(q));
    }

    /// Takes out every item whose value satisfies pred(const T&), due or not,
    /// in one step under the lock (O(n)). Returns them in due order. pred
    /// must not call into this queue; if it throws, nothing is removed.
    template <class Pred>
    std::vector<item> remove_if(Pred pred) {
        std::vector<detail::queued<T>> taken;
        std::vector<item> out;
        {
            std::lock_guard lock(mutex_);
            // Everything that can throw (pred, allocation) happens before
            // the first item moves.
            std::vector<bool> hit(items_.size());
            std::vector<bool> ready_hit(ready_.size());
            std::size_t i = 0;
            std::size_t n = 0;
            const auto mark = [&](std::vector<bool>& marks, const detail::queued<T>& q) {
                if (pred(std::as_const(q.value))) {
                    marks[i] = true;
                    ++n;
                }
                ++i;
            };
            items_.for_each([&](const detail::queued<T>& q) { mark(hit, q); });
            i = 0;
            for (const auto& q : ready_) mark(ready_hit, q);
            if (n == 0) return out;
            taken.reserve(n);
            out.reserve(n);
            items_.extract_marked(hit, taken);
            extract_ready(ready_hit, taken);
            for (const auto& q : taken) bytes_ -= q.bytes;
            taken_out_ += n;
            publish_sizes();
        }
        in_due_order(taken, out);
        return out;
    }

    /// Takes out every item whose std::invoke(proj, value) == key, such as every
    /// job held from one channel: q.remove(channel_id, &job::channel).
    template <class Key, class Proj = std::identity>
    std::vector<item> remove(const Key& key, Proj proj = {}) {
        return remove_if([&](const T& v) { return std::invoke(proj, v) == key; });
    }

    /// Takes out every item, due or not, in due order: for shutdown.
    std::vector<item> drain() {
        std::vector<detail::queued<T>> taken;
        std::vector<item> out;
        {
            std::lock_guard lock(mutex_);
            out.reserve(items_.size() + ready_.size());
            taken = items_.extract_all();
            taken.reserve(taken.size() + ready_.size());
            extract_ready(std::vector<bool>(ready_.size(), true), taken);
            taken_out_ += taken.size();
            bytes_ = 0;
            publish_sizes();
        }
        in_due_order(taken, out);
        return out;
    }

    /// Calls f(const queue_place&, const T&) on up to `limit` items whose
    /// place comes after `after` (from the first when empty), in place
    /// order, under the lock: O(log n + limit), nothing copied or moved.
    /// Returns how many it visited. f must not call into this queue; what
    /// it throws propagates, and the queue is unchanged.
    template <class F>
    std::size_t visit(std::optional<queue_place> after, std::size_t limit, F&& f) const {
        std::lock_guard lock(mutex_);
        std::size_t n = 0;
        if (limit == 0) return n;
        if (!after || after->ready) {
            // Push order is the ready path's order: a binary search on seq.
            auto it = ready_.begin();
            if (after)
                it = std::upper_bound(ready_.begin(), ready_.end(), after->seq,
                                      [](std::uint64_t s, const detail::queued<T>& q) { return s < q.seq; });
            for (; it != ready_.end() && n < limit; ++it, ++n) f(queue_place{true, 0, it->seq}, std::as_const(it->value));
        }
        if (n == limit) return n;
        const detail::due_key from = after ? detail::due_key{after->due, after->seq} : detail::due_key{};
        items_.visit_after(after && !after->ready ? &from : nullptr, [&](const detail::queued<T>& q) {
            f(queue_place{false, q.due, q.seq}, std::as_const(q.value));
            return ++n < limit;
        });
        return n;
    }

    /// Refuses further pushes and wakes every waiter; pops return empty from
    /// now on. Idempotent. Held items stay (see drain()).
    void close() {
        {
            std::lock_guard lock(mutex_);
            closed_ = true;
        }
        cv_.notify_all();
    }

    /// True once close() has been called.
    bool closed() const {
        std::lock_guard lock(mutex_);
        return closed_;
    }

    /// Items held. Lock-free; may lag a concurrent push or pop.
    std::size_t size() const noexcept { return size_.load(std::memory_order_relaxed); }
    /// Of those, the items in the ready path (pushed by push_ready() or
    /// push_ready_quiet() and not yet popped). A snapshot, like size().
    std::size_t ready_size() const noexcept { return ready_size_.load(std::memory_order_relaxed); }
    /// size() == 0: a snapshot, like size().
    bool empty() const noexcept { return size() == 0; }
    /// Sum of the bytes of the items held. Lock-free; may lag as size() does.
    std::size_t bytes() const noexcept { return bytes_out_.load(std::memory_order_relaxed); }

    /// Due time of the earliest / latest item, empty when there is none.
    std::optional<steady_time> earliest_due() const {
        std::lock_guard lock(mutex_);
        if (items_.empty() && ready_.empty()) return std::nullopt;
        if (items_.empty()) return to_time(ready_.front().due);
        if (ready_.empty()) return to_time(items_.min().due);
        return to_time(std::min(items_.min().due, ready_.front().due));
    }
    /// Of held items, the latest; the ready path only counts when nothing
    /// else is held (its items are due already).
    std::optional<steady_time> latest_due() const {
        std::lock_guard lock(mutex_);
        if (!items_.empty()) return to_time(items_.max().due);
        if (ready_.empty()) return std::nullopt;
        return to_time(ready_.back().due);
    }

    /// Counters and gauges, read together under the lock.
    delay_queue_stats stats() const {
        std::lock_guard lock(mutex_);
        return {held(), bytes_, pushed_, popped_, refused_, taken_out_};
    }

    /// The bounds given at construction.
    const delay_queue_limits& limits() const noexcept { return limits_; }
    /// The clock given at construction.
    const Clock& clock() const noexcept { return clock_; }

private:
    using ticks = std::int64_t;

    static steady_time to_time(ticks t) noexcept { return steady_time(steady_time::duration(t)); }

    // Due if the clock has reached t. The last reading is kept: time only
    // moves forward, so an item due by an earlier reading is still due, and
    // a backlog of overdue items is handed out without reading the clock for
    // each. Called with mutex_ held.
    bool is_due(ticks t) {
        if (t <= last_now_) {
            clock_hungry_.store(false, std::memory_order_relaxed);
            return true;
        }
        clock_hungry_.store(true, std::memory_order_relaxed);
        last_now_ = clock_.now().time_since_epoch().count();
        return t <= last_now_;
    }

    // Takes the lock for a pop. When the last pop had to read the clock
    // (items arrive about when they are due) or another thread holds the
    // lock, the clock is read before taking it rather than inside the
    // critical section: any reading is a valid lower bound of "now", so this
    // shortens the time the lock is held without ever making an item due
    // early. A backlog of overdue items is still handed out without reading
    // the clock at all.
    std::unique_lock<std::mutex> lock_for_pop() {
        std::unique_lock lock(mutex_, std::defer_lock);
        if (clock_hungry_.load(std::memory_order_relaxed) || !lock.try_lock()) {
            const ticks hint = clock_.now().time_since_epoch().count();
            lock.lock();
            if (hint > last_now_) last_now_ = hint;
        }
        return lock;
    }

    std::size_t held() const noexcept { return items_.size() + ready_.size(); }

    // Whether an item of `bytes` may enter; called with mutex_ held.
    std::optional<push_result> admit(std::size_t bytes) noexcept {
        if (closed_) return push_result::closed;
        if (bytes > limits_.max_bytes) {
            ++refused_;
            return push_result::too_large;
        }
        if (held() >= limits_.max_items || bytes > limits_.max_bytes - bytes_) {
            ++refused_;
            return push_result::full;
        }
        return std::nullopt;
    }

    void publish_sizes() noexcept {
        size_.store(held(), std::memory_order_relaxed);
        ready_size_.store(ready_.size(), std::memory_order_relaxed);
        bytes_out_.store(bytes_, std::memory_order_relaxed);
    }

    static item release(detail::queued<T>&& q) noexcept {
        return item{std::move(q.value), to_time(q.due), q.bytes};
    }

    // Called with mutex_ held: the next item to hand out if one is due -
    // of the ready path's oldest and the earliest held item, the one due
    // first (ready items are due by definition).
    std::optional<item> take_due() noexcept {
        const bool held_due = !items_.empty() && is_due(items_.min().due);
        if (ready_.empty() && !held_due) return std::nullopt;
        detail::queued<T> q = !ready_.empty() && (!held_due || ready_.front().due <= items_.min().due)
                                  ? take_ready_front()
                                  : items_.pop_min();
        bytes_ -= q.bytes;
        ++popped_;
        publish_sizes();
        return release(std::move(q));
    }

    detail::queued<T> take_ready_front() noexcept {
        detail::queued<T> q = std::move(ready_.front());
        ready_.pop_front();
        return q;
    }
    detail::queued<T> take_ready_back() noexcept {
        detail::queued<T> q = std::move(ready_.back());
        ready_.pop_back();
        return q;
    }

    // Moves the ready items marked in `marks` to out (which has room),
    // keeping the others in order.
    void extract_ready(const std::vector<bool>& marks, std::vector<detail::queued<T>>& out) noexcept {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < ready_.size(); ++i) {
            if (marks[i]) out.push_back(std::move(ready_[i]));
            else if (kept++ != i) ready_[kept - 1] = std::move(ready_[i]);
        }
        ready_.erase(ready_.begin() + static_cast<std::ptrdiff_t>(kept), ready_.end());
    }

    // out has room for every element of qs.
    static void in_due_order(std::vector<detail::queued<T>>& qs, std::vector<item>& out) noexcept {
        if (!std::is_sorted(qs.begin(), qs.end(), detail::earlier{})) std::sort(qs.begin(), qs.end(), detail::earlier{});
        for (auto& q : qs) out.push_back(release(std::move(q)));
    }

    std::optional<item> try_pop_unless_stopped(const std::stop_token& stop) {
        if (stop.stop_requested()) return std::nullopt;
        return try_pop();
    }

    std::optional<item> pop_stoppable(const steady_time* deadline, const std::stop_token& stop) {
        // The callback takes the lock, so it is registered before (and
        // unregistered after) this thread holds it: a stop requested
        // meanwhile either runs the callback here, now, or is seen under
        // the lock by the wait loop.
        std::stop_callback on_stop(stop, [this] {
            { std::lock_guard lock(mutex_); }
            cv_.notify_all();
        });
        return pop_impl(deadline, &stop);
    }

    // push_ready() and push_ready_quiet(): appends to the ready path; a quiet
    // push is counted for wake_ready(), a loud one says whether to wake a waiter.
    push_result enqueue_ready(T&& value, steady_time due, std::size_t bytes, bool quiet, bool& wake) {
        std::lock_guard lock(mutex_);
        if (const auto refused = admit(bytes)) return *refused;
        const ticks now = clock_.now().time_since_epoch().count();
        const ticks at = std::min<ticks>(due.time_since_epoch().count(), now);
        ready_.push_back(detail::queued<T>{at, next_seq_++, bytes, std::move(value)});
        if (now > last_now_) last_now_ = now;
        bytes_ += bytes;
        ++pushed_;
        if (quiet) {
            ++unannounced_;
        } else {
            wake = waiters_ > 0;
        }
        publish_sizes();
        return push_result::ok;
    }

    // The wait loop of every blocking pop (the leader/follower scheme of
    // Java's DelayQueue). deadline and stop may be null.
    std::optional<item> pop_impl(const steady_time* deadline, const std::stop_token* stop) {
        std::optional<item> out;
        bool pass_on = false;
        {
            auto lock = lock_for_pop();
            for (;;) {
                if (closed_ || (stop != nullptr && stop->stop_requested())) break;
                if ((out = take_due())) break;
                if (deadline != nullptr && is_due(deadline->time_since_epoch().count())) break;

                ++waiters_;
                if (!items_.empty() && leader_ == 0) {
                    // Lead: sleep until the earliest item is due (or our own
                    // deadline, if sooner).
                    const std::uint64_t me = ++leader_tickets_;
                    leader_ = me;
                    steady_time wake = to_time(items_.min().due);
                    if (deadline != nullptr && *deadline < wake) wake = *deadline;
                    cv_.wait_until(lock, wake);
                    if (leader_ == me) leader_ = 0;
                } else if (deadline != nullptr) {
                    cv_.wait_until(lock, *deadline);
                } else {
                    cv_.wait(lock);
                }
                --waiters_;
            }
            // Leaving with no leader while items wait: hand the timer to a
            // sleeper, or nobody would wake for the next item.
            pass_on = leader_ == 0 && held() > 0 && waiters_ > 0;
        }
        if (pass_on) cv_.notify_one();
        return out;
    }

    Clock clock_;
    const delay_queue_limits limits_;

    mutable std::mutex mutex_;
    typename Clock::condition_variable cv_{clock_};
    detail::sorted_blocks<detail::queued<T>, detail::key_of_queued> items_;
    std::deque<detail::queued<T>> ready_;  // push_ready(): due already, arrival order
    std::size_t bytes_ = 0;
    std::uint64_t next_seq_ = 0;
    ticks last_now_ = std::numeric_limits<ticks>::min();
    bool closed_ = false;
    std::size_t waiters_ = 0;
    std::size_t unannounced_ = 0;  // push_ready_quiet() items not yet announced by wake_ready()
    std::uint64_t leader_ = 0;  // ticket of the thread sleeping for the earliest item; 0: none
    std::uint64_t leader_tickets_ = 0;

    std::uint64_t pushed_ = 0;
    std::uint64_t popped_ = 0;
    std::uint64_t refused_ = 0;
    std::uint64_t taken_out_ = 0;

    std::atomic<bool> clock_hungry_{false};  // a hint only: did the last due check read the clock?
    std::atomic<std::size_t> size_{0};
    std::atomic<std::size_t> ready_size_{0};
    std::atomic<std::size_t> bytes_out_{0};
};

}  // namespace tarry
