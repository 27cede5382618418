// Publisher-confirm bookkeeping (see the header).
#include "confirm_tracker.hpp"

#include <algorithm>

namespace tarry::amqp::detail {

std::uint64_t confirm_tracker::add(op_id waiter) {
    const std::uint64_t seq = next_++;
    entries_.push_back({seq, waiter, false});
    ++unsettled_;
    return seq;
}

bool confirm_tracker::settle(std::uint64_t tag, bool multiple, std::vector<op_id>& settled) {
    if (tag == 0 || tag >= next_) return false;
    if (entries_.empty() || tag < entries_.front().seq) return true;  // long settled
    if (multiple) {
        for (auto& e : entries_) {
            if (e.seq > tag) break;
            if (!e.settled) {
                e.settled = true;
                --unsettled_;
                if (e.waiter) settled.push_back(e.waiter);
            }
        }
    } else {
        // Sequence numbers are contiguous from the front's.
        auto& e = entries_[static_cast<std::size_t>(tag - entries_.front().seq)];
        if (!e.settled) {
            e.settled = true;
            --unsettled_;
            if (e.waiter) settled.push_back(e.waiter);
        }
    }
    trim();
    return true;
}

void confirm_tracker::trim() {
    while (!entries_.empty() && entries_.front().settled) entries_.pop_front();
}

std::vector<op_id> confirm_tracker::drain() {
    std::vector<op_id> out;
    for (const auto& e : entries_) {
        if (!e.settled && e.waiter) out.push_back(e.waiter);
    }
    entries_.clear();
    unsettled_ = 0;
    return out;
}

}  // namespace tarry::amqp::detail
