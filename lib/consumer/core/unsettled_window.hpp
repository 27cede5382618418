// The deliveries of one lane incarnation not yet settled (acked, nacked),
// and when the oldest of them arrived. A channel numbers its deliveries
// 1, 2, 3, ... so they are kept by tag, in chunks of 64 consecutive tags:
// a bit each (delivered, not settled) and its arrival time. A chunk whose
// deliveries are all settled is freed, so memory follows the unsettled
// deliveries (plus a pointer per 64 tags between the oldest and the
// newest). O(1) amortized per delivery and settlement; no scan.
// Single-threaded.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

namespace tarry::detail {

class unsettled_window {
public:
    /// Tag `tag` arrived at `at` (any clock's ticks; the caller's unit).
    /// Tags come in increasing order.
    void delivered(std::uint64_t tag, std::int64_t at);
    /// Tag `tag` is settled; an unknown or settled tag changes nothing.
    void settled(std::uint64_t tag) noexcept;
    /// Every delivery is settled (or its channel is gone).
    void clear() noexcept;
    /// When the oldest unsettled delivery arrived; empty when none is.
    std::optional<std::int64_t> oldest() const noexcept;

private:
    static constexpr std::uint64_t width = 64;
    struct chunk {
        std::uint64_t pending = 0;  // bit i: tag (its first + i) delivered, not settled
        std::array<std::int64_t, width> at{};
    };
    void release(std::unique_ptr<chunk>& c) noexcept;
    void trim() noexcept;

    std::deque<std::unique_ptr<chunk>> chunks_;  // chunks_[i]: tags of chunk first_ + i; null: none pending
    std::uint64_t first_ = 0;                    // tag / width of chunks_.front()
    std::unique_ptr<chunk> spare_;               // a freed chunk, to reuse
};

}  // namespace tarry::detail
