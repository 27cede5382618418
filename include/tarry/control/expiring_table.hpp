// The one expiring table of the control layer: what a consumer keeps of the
// control stream's entries (tombstones, schedule supersessions, run
// claims), one slot per key, each counting for a fixed retention after its
// entry was written. claim_table and tombstone_table are this table with
// their own rule for a second entry of a key.
//
// Compact: keys (and text values) are packed texts (packed_text.hpp), in
// arrays parallel to the values and written times; no second copy is kept
// for expiry: expire() sweeps the slots, only once the oldest has expired.
// Written times are kept in whole seconds (4 bytes, 1970 to 2106, later
// ones as 2106), as the control stream's entries carry them. A tombstone
// costs about 40 bytes, a run claim about 52.
//
// Threads: every member may be called from any thread at once (readers
// share a lock; add and expire take it alone); empty() takes no lock.
#pragma once

#include "tarry/control/packed_keys.hpp"
#include "tarry/time/epoch_text.hpp"
#include "tarry/time/time_points.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tarry::control::detail {

/// Slots of `Value` (std::uint64_t or std::string) by string key, each
/// with the written time of the entry that keeps it. Memory is bounded by
/// the entries written within the retention: expire() frees every slot
/// expired by then.
template <class Value>
class expiring_table {
    static_assert(std::is_same_v<Value, std::uint64_t> || std::is_same_v<Value, std::string>,
                  "expiring_table keeps numbers or texts");
    static constexpr bool text_values = std::is_same_v<Value, std::string>;
    using stored = std::conditional_t<text_values, packed_text, Value>;

public:
    /// A key's value and the written time that keeps it.
    struct slot {
        Value value;
        wall_time written;
    };

    /// Throws std::invalid_argument, naming `owner`, unless 0 < retention.
    expiring_table(std::chrono::milliseconds retention, std::string_view owner) : retention_(retention) {
        if (retention <= std::chrono::milliseconds::zero())
            throw std::invalid_argument(std::string(owner) + ": the retention must be positive");
    }

    /// Written `retention` or longer before `now` (no overflow near the ends
    /// of wall_time).
    bool expired(wall_time written, wall_time now) const noexcept { return now - written >= retention_; }

    /// Adds an entry of `key`. A new key gets a slot {value, written}. For a
    /// key with a slot, `merge(slot&, const Value&, wall_time written)`
    /// decides: it may change the slot (its value, its written time) and
    /// returns whether the entry counts. Returns false, keeping nothing,
    /// when the entry is expired at `now` or merge said it does not count.
    template <class Merge>
    bool add(std::string_view key, Value value, wall_time written, wall_time now, Merge&& merge) {
        const auto seconds = to_seconds(written);
        written = from_seconds(seconds);  // as it is kept
        if (expired(written, now)) return false;
        std::unique_lock lock(mutex_);
        const auto [at, inserted] = keys_.find_or_insert(key);
        bool counts = true;
        if (inserted) {
            try {
                values_.push_back(store(value));
                written_.push_back(seconds);  // at the same position as the key and value
            } catch (...) {
                if (values_.size() > written_.size()) {
                    drop_value(values_.back());
                    values_.pop_back();
                }
                keys_.erase_swap(at);
                throw;
            }
        } else {
            const Value before = load(values_[at]);
            slot kept{before, from_seconds(written_[at])};
            counts = std::invoke(merge, kept, std::as_const(value), written);
            if (counts) {
                if (kept.value != before) replace_value(at, kept.value);
                written_[at] = to_seconds(kept.written);
                written = from_seconds(written_[at]);
            }
        }
        if (counts && (keys_.size() == 1 || written < oldest_)) oldest_ = written;
        count_.store(keys_.size(), std::memory_order_release);
        return counts;
    }

    /// A copy of `key`'s slot, expired or not, until expire() frees it.
    std::optional<slot> find(std::string_view key) const {
        if (empty()) return std::nullopt;
        std::shared_lock lock(mutex_);
        const auto at = keys_.find(key);
        if (!at) return std::nullopt;
        return slot{load(values_[*at]), from_seconds(written_[*at])};
    }

    /// Frees the slots expired at `now`; returns how many. Sweeps the
    /// table only when the oldest slot has expired.
    std::size_t expire(wall_time now) {
        std::unique_lock lock(mutex_);
        if (keys_.size() == 0 || !expired(oldest_, now)) return 0;
        std::size_t freed = 0;
        wall_time oldest = wall_time::max();
        for (std::size_t p = 0; p < keys_.size();) {
            if (!expired(from_seconds(written_[p]), now)) {
                oldest = std::min(oldest, from_seconds(written_[p]));
                ++p;
                continue;
            }
            erase_swap(p);  // the last slot moves to p: look at p again
            ++freed;
        }
        oldest_ = oldest;
        count_.store(keys_.size(), std::memory_order_release);
        return freed;
    }

    /// Calls `f(key, slot)` for every slot not expired at `now`, in no
    /// particular order, under the shared lock: `f` must not call into the
    /// table.
    template <class F>
    void for_each(wall_time now, F&& f) const {
        std::shared_lock lock(mutex_);
        std::string key;
        for (std::size_t p = 0; p < keys_.size(); ++p) {
            if (expired(from_seconds(written_[p]), now)) continue;
            keys_.key_at(p, key);
            const slot kept{load(values_[p]), from_seconds(written_[p])};
            f(std::string_view(key), kept);
        }
    }

    /// Keys with a slot (expired ones until expire()).
    std::size_t size() const {
        std::shared_lock lock(mutex_);
        return keys_.size();
    }
    /// True when no slot is kept; takes no lock.
    bool empty() const noexcept { return count_.load(std::memory_order_acquire) == 0; }
    /// The retention given at construction.
    std::chrono::milliseconds retention() const noexcept { return retention_; }

private:
    static std::uint32_t to_seconds(wall_time t) noexcept {
        return static_cast<std::uint32_t>(
            std::min<std::uint64_t>(epoch_whole_seconds(t), std::numeric_limits<std::uint32_t>::max()));
    }
    static wall_time from_seconds(std::uint32_t s) noexcept { return from_epoch_whole_seconds(s); }
    stored store(const Value& v) {
        if constexpr (text_values) return pack(v, keys_.pool());
        else return v;
    }
    Value load(const stored& s) const {
        if constexpr (text_values) {
            std::string out;
            unpack(s, keys_.pool(), out);
            return out;
        } else {
            return s;
        }
    }
    void replace_value(std::size_t p, const Value& v) {
        auto fresh = store(v);
        drop_value(values_[p]);
        values_[p] = fresh;
    }
    void drop_value(const stored& s) noexcept {
        if constexpr (text_values) release(s, keys_.pool());
    }
    void erase_swap(std::size_t p) noexcept {
        drop_value(values_[p]);
        const auto last = keys_.size() - 1;
        keys_.erase_swap(p);
        if (p != last) {
            values_[p] = values_[last];
            written_[p] = written_[last];
        }
        values_.pop_back();
        written_.pop_back();
    }

    const std::chrono::milliseconds retention_;
    mutable std::shared_mutex mutex_;
    packed_keys keys_;
    std::deque<stored> values_;      // parallel to keys_' positions
    std::deque<std::uint32_t> written_;  // the same: whole seconds since the epoch
    wall_time oldest_{};             // no later than any slot's written time
    std::atomic<std::size_t> count_{0};
};

}  // namespace tarry::control::detail
