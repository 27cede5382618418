// The one expiring table of the control layer: what a consumer keeps of the
// control stream's entries (tombstones, schedule supersessions, run
// claims), one slot per key, each counting for a fixed retention after its
// entry was written. claim_table and tombstone_table are this table with
// their own rule for a second entry of a key.
//
// Threads: every member may be called from any thread at once (readers
// share a lock; add and expire take it alone); empty() takes no lock.
#pragma once

#include "tarry/time/time_points.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace tarry::control::detail {

/// Slots of `Value` by string key, each with the written time of the entry
/// that keeps it. Memory is bounded by the entries written within the
/// retention: expire() frees a slot once it is expired and no later entry
/// of its key was added after it.
template <class Value>
class expiring_table {
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
        if (expired(written, now)) return false;
        std::unique_lock lock(mutex_);
        auto it = slots_.find(key);
        bool counts = true;
        if (it == slots_.end()) slots_.emplace(std::string(key), slot{std::move(value), written});
        else counts = std::invoke(merge, it->second, std::as_const(value), written);
        if (counts) added_.emplace_back(written, std::string(key));
        count_.store(slots_.size(), std::memory_order_release);
        return counts;
    }

    /// A copy of `key`'s slot, expired or not, until expire() frees it.
    std::optional<slot> find(std::string_view key) const {
        if (empty()) return std::nullopt;
        std::shared_lock lock(mutex_);
        const auto it = slots_.find(key);
        if (it == slots_.end()) return std::nullopt;
        return it->second;
    }

    /// Frees the slots expired at `now`; returns how many. Entries are
    /// visited in the order added, so one written earlier than the one
    /// before it waits behind it.
    std::size_t expire(wall_time now) {
        std::unique_lock lock(mutex_);
        std::size_t freed = 0;
        while (!added_.empty() && expired(added_.front().first, now)) {
            const auto it = slots_.find(added_.front().second);
            // Gone already, or kept alive by a later entry of the same key.
            if (it != slots_.end() && expired(it->second.written, now)) {
                slots_.erase(it);
                ++freed;
            }
            added_.pop_front();
        }
        count_.store(slots_.size(), std::memory_order_release);
        return freed;
    }

    /// Calls `f(key, slot)` for every slot not expired at `now`, in no
    /// particular order, under the shared lock: `f` must not call into the
    /// table.
    template <class F>
    void for_each(wall_time now, F&& f) const {
        std::shared_lock lock(mutex_);
        for (const auto& [key, kept] : slots_)
            if (!expired(kept.written, now)) f(std::string_view(key), kept);
    }

    /// Keys with a slot (expired ones until expire()).
    std::size_t size() const {
        std::shared_lock lock(mutex_);
        return slots_.size();
    }
    /// True when no slot is kept; takes no lock.
    bool empty() const noexcept { return count_.load(std::memory_order_acquire) == 0; }
    /// The retention given at construction.
    std::chrono::milliseconds retention() const noexcept { return retention_; }

private:
    struct string_hash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };

    const std::chrono::milliseconds retention_;
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, slot, string_hash, std::equal_to<>> slots_;
    // Each entry that counted, in the order added: expire() pops from the
    // front while expired.
    std::deque<std::pair<wall_time, std::string>> added_;
    std::atomic<std::size_t> count_{0};
};

}  // namespace tarry::control::detail
