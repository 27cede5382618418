#include "event_outbox.hpp"

namespace tarry::detail {

bool event_outbox::offer(const job_event& e) {
    // A place is reserved first, so the bound holds with many offering at once.
    if (waiting_.fetch_add(1, std::memory_order_relaxed) >= capacity_) {
        waiting_.fetch_sub(1, std::memory_order_relaxed);
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    bool wake = false;
    {
        std::lock_guard lock(mutex_);
        if (closed_) {
            waiting_.fetch_sub(1, std::memory_order_relaxed);
            dropped_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        queued_.push_back(e);
        wake = taker_waits_;
        taker_waits_ = false;
    }
    if (wake) ready_.notify_one();  // once per batch: the taker sleeps no more
    return true;
}

std::vector<job_event> event_outbox::take(std::chrono::milliseconds linger) {
    std::vector<job_event> out;
    std::unique_lock lock(mutex_);
    while (queued_.empty() && !closed_) {
        taker_waits_ = true;
        ready_.wait(lock);
    }
    taker_waits_ = false;
    // The events offered in the next `linger` go along (close() cuts it short).
    if (linger.count() > 0 && !closed_) ready_.wait_for(lock, linger, [this] { return closed_; });
    out.swap(queued_);
    return out;
}

void event_outbox::close() {
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
    }
    ready_.notify_all();
}

void event_outbox::settled(std::size_t n, bool published) {
    waiting_.fetch_sub(n, std::memory_order_relaxed);
    (published ? published_ : dropped_).fetch_add(n, std::memory_order_relaxed);
}

}  // namespace tarry::detail
