// The latest dead letters (consumer_metrics::recent_dead_letters): a ring of
// recent_dead_letters_kept entries behind a mutex. Dead letters are rare,
// so a lock is no cost. Thread-safe.
#pragma once

#include "tarry/consumer/consumer_metrics.hpp"

#include <array>
#include <mutex>
#include <vector>

namespace tarry::detail {

class recent_dead_letters {
public:
    void add(dead_letter_info letter);
    /// At most recent_dead_letters_kept, newest first.
    std::vector<dead_letter_info> newest_first() const;

private:
    mutable std::mutex mutex_;
    std::array<dead_letter_info, recent_dead_letters_kept> ring_;
    std::size_t next_ = 0;   // where the next one goes
    std::size_t count_ = 0;  // how many are kept (at most the ring's size)
};

}  // namespace tarry::detail
