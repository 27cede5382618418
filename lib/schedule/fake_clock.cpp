// fake_clock: a time line moved by tests, and a condition variable whose
// sleepers wake only when notified or when that time line reaches their
// deadline.
//
// Each sleeping thread waits on its own node (fake_sleeper), so a wake-up can
// be aimed: advance() wakes exactly the sleepers whose deadline has come.
//
// Lock order (never taken the other way round):
//   caller's lock -> condition_variable::mutex_ -> state.sleep_mutex
//   state.cv_mutex -> condition_variable::mutex_
// The time itself is atomic so a sleeper can read it while holding mutex_.
#include "tarry/schedule/fake_clock.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <stdexcept>

namespace tarry {
namespace detail {

struct fake_sleeper {
    steady_time deadline;  // steady_time::max() for wait()
    bool woken = false;
    std::condition_variable cv;
};

struct fake_clock_state {
    std::atomic<std::int64_t> steady_ns;
    std::atomic<std::int64_t> wall_ns;

    std::mutex cv_mutex;  // guards cvs; held while waking so none is destroyed meanwhile
    std::vector<fake_clock::condition_variable*> cvs;

    // Sleeper accounting for tests: threads asleep that nobody has woken
    // yet, and how many sleeps ever began.
    mutable std::mutex sleep_mutex;
    mutable std::condition_variable sleep_cv;
    std::size_t sleepers = 0;
    std::uint64_t sleeps = 0;

    fake_clock_state(steady_time s, wall_time w)
        : steady_ns(s.time_since_epoch().count()),
          wall_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(w.time_since_epoch()).count()) {}

    steady_time now() const noexcept { return steady_time(std::chrono::nanoseconds(steady_ns.load())); }

    void fell_asleep() {
        std::lock_guard lock(sleep_mutex);
        ++sleepers;
        ++sleeps;
        sleep_cv.notify_all();
    }

    void woke(std::size_t n) {
        if (n == 0) return;
        std::lock_guard lock(sleep_mutex);
        sleepers -= n;
    }
};

}  // namespace detail

namespace {
// 2024-01-01T00:00:00Z
constexpr std::chrono::seconds default_wall_start{1'704'067'200};
// Far from zero so that "due 10 s ago" is still a valid steady time.
constexpr std::chrono::hours default_steady_start{1000};

bool deadline_reached(const detail::fake_sleeper& s, steady_time now) { return s.deadline <= now; }
bool always(const detail::fake_sleeper&, steady_time) { return true; }
}  // namespace

fake_clock::fake_clock()
    : fake_clock(steady_time(default_steady_start), wall_time(default_wall_start)) {}

fake_clock::fake_clock(steady_time steady_start, wall_time wall_start)
    : state_(std::make_shared<detail::fake_clock_state>(steady_start, wall_start)) {}

steady_time fake_clock::now() const noexcept { return state_->now(); }

wall_time fake_clock::wall_now() const noexcept {
    return wall_time(std::chrono::duration_cast<wall_time::duration>(
        std::chrono::nanoseconds(state_->wall_ns.load())));
}

void fake_clock::advance(std::chrono::nanoseconds d) {
    if (d < std::chrono::nanoseconds::zero())
        throw std::invalid_argument("fake_clock::advance: steady time never goes back");
    // Holding cv_mutex serialises concurrent advances, so each one wakes
    // against a time at least as late as its own.
    std::lock_guard lock(state_->cv_mutex);
    state_->steady_ns.fetch_add(d.count());
    state_->wall_ns.fetch_add(d.count());
    const steady_time now = state_->now();
    for (auto* cv : state_->cvs) cv->wake_if(deadline_reached, now);
}

void fake_clock::step_wall(std::chrono::nanoseconds d) noexcept { state_->wall_ns.fetch_add(d.count()); }

void fake_clock::wake_all() {
    std::lock_guard lock(state_->cv_mutex);
    for (auto* cv : state_->cvs) cv->wake_if(always, steady_time{});
}

std::size_t fake_clock::sleepers() const {
    std::lock_guard lock(state_->sleep_mutex);
    return state_->sleepers;
}

std::uint64_t fake_clock::sleeps() const {
    std::lock_guard lock(state_->sleep_mutex);
    return state_->sleeps;
}

bool fake_clock::wait_for_sleepers(std::size_t n, std::chrono::milliseconds real_timeout) const {
    std::unique_lock lock(state_->sleep_mutex);
    return state_->sleep_cv.wait_for(lock, real_timeout, [&] { return state_->sleepers >= n; });
}

bool fake_clock::wait_for_sleeps(std::uint64_t n, std::chrono::milliseconds real_timeout) const {
    std::unique_lock lock(state_->sleep_mutex);
    return state_->sleep_cv.wait_for(lock, real_timeout, [&] { return state_->sleeps >= n; });
}

fake_clock::condition_variable::condition_variable(const fake_clock& clock) : state_(clock.state_) {
    std::lock_guard lock(state_->cv_mutex);
    state_->cvs.push_back(this);
}

fake_clock::condition_variable::~condition_variable() {
    std::lock_guard lock(state_->cv_mutex);
    std::erase(state_->cvs, this);
}

void fake_clock::condition_variable::wait(std::unique_lock<std::mutex>& lock) { sleep(lock, nullptr); }

void fake_clock::condition_variable::wait_until(std::unique_lock<std::mutex>& lock, steady_time deadline) {
    sleep(lock, &deadline);
}

void fake_clock::condition_variable::notify_one() {
    std::lock_guard lock(mutex_);
    if (sleepers_.empty()) return;
    detail::fake_sleeper* s = sleepers_.front();
    sleepers_.erase(sleepers_.begin());
    s->woken = true;
    s->cv.notify_one();
    state_->woke(1);
}

void fake_clock::condition_variable::notify_all() { wake_if(always, steady_time{}); }

void fake_clock::condition_variable::wake_if(bool (*pred)(const detail::fake_sleeper&, steady_time),
                                             steady_time now) {
    std::lock_guard lock(mutex_);
    const std::size_t n = std::erase_if(sleepers_, [&](detail::fake_sleeper* s) {
        if (!pred(*s, now)) return false;
        s->woken = true;
        s->cv.notify_one();
        return true;
    });
    state_->woke(n);
}

void fake_clock::condition_variable::sleep(std::unique_lock<std::mutex>& lock, const steady_time* deadline) {
    // mutex_ is taken before the caller's lock is released and held until
    // the wait below releases it. A notify or an advance (both take mutex_)
    // therefore either comes before the time is read here, or finds this
    // sleeper in sleepers_: never in between.
    std::unique_lock own(mutex_);
    if (deadline != nullptr && state_->now() >= *deadline) return;
    detail::fake_sleeper me;
    me.deadline = deadline != nullptr ? *deadline : steady_time::max();
    sleepers_.push_back(&me);
    state_->fell_asleep();
    lock.unlock();
    me.cv.wait(own, [&] { return me.woken; });  // whoever woke us removed us from sleepers_
    own.unlock();
    lock.lock();
}

}  // namespace tarry
