#include "recent_dead_letters.hpp"

namespace tarry::detail {

void recent_dead_letters::add(dead_letter_info letter) {
    std::lock_guard lock(mutex_);
    ring_[next_] = std::move(letter);
    next_ = (next_ + 1) % ring_.size();
    if (count_ < ring_.size()) ++count_;
}

std::vector<dead_letter_info> recent_dead_letters::newest_first() const {
    std::lock_guard lock(mutex_);
    std::vector<dead_letter_info> out;
    out.reserve(count_);
    for (std::size_t i = 1; i <= count_; ++i) out.push_back(ring_[(next_ + ring_.size() - i) % ring_.size()]);
    return out;
}

}  // namespace tarry::detail
