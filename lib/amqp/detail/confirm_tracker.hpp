// Publisher-confirm bookkeeping for one channel: which publish sequence
// numbers are still unconfirmed, and who waits for each.
//
// Sequence numbers count every publish after confirm.select, from 1.
// The broker answers each exactly once with basic.ack or basic.nack,
// possibly out of order, `multiple` covering every tag up to its own.
// Not thread-safe (the I/O thread owns it).
#pragma once

#include "machine_types.hpp"

#include <cstdint>
#include <deque>
#include <vector>

namespace tarry::amqp::detail {

class confirm_tracker {
public:
    /// Records the next publish; returns its sequence number.
    std::uint64_t add(op_id waiter);

    /// Settles `tag` (or every unsettled tag ≤ tag when multiple) and
    /// appends their waiters (non-zero ones) to `settled`. Returns false
    /// when the broker named a tag we never published (a protocol error);
    /// tags already settled are ignored.
    bool settle(std::uint64_t tag, bool multiple, std::vector<op_id>& settled);

    /// Every unsettled waiter, in order; the tracker is left empty (the
    /// channel is gone, they all fail).
    std::vector<op_id> drain();

    std::size_t unconfirmed() const noexcept { return unsettled_; }
    std::uint64_t last_sequence() const noexcept { return next_ - 1; }

private:
    struct entry {
        std::uint64_t seq;
        op_id waiter;
        bool settled;
    };
    void trim();

    std::deque<entry> entries_;  // ascending seq; settled ones trimmed from the front
    std::uint64_t next_ = 1;
    std::size_t unsettled_ = 0;
};

}  // namespace tarry::amqp::detail
