// The live tombstones of one queue, as a consumer knows them: the reader of
// the control stream adds them, admission and release ask whether a copy is
// cancelled.
//
// Promises:
// - covers(id, g, now) is true exactly when a tombstone for `id` with a
//   generation above g was added, written no longer than `retention`
//   before `now` (written times count in whole seconds, as the control
//   stream's entries carry them). A tombstone never covers a copy of its own generation or
//   a newer one (a reschedule's new copy), nor another id.
// - Per id one entry: the highest generation and the latest written time
//   of its tombstones (so an entry lives as long as its newest tombstone,
//   and covers what each of them would).
// - Memory is bounded by the tombstones written within `retention`:
//   expire(now) frees the older ones (covers() ignores them already).
// Threads: every member may be called from any thread at once (readers
// share a lock; add and expire take it alone). empty() takes no lock.
#pragma once

#include "tarry/control/expiring_table.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace tarry::control {

/// The live tombstones of one queue: whether a copy of a job is
/// cancelled; bounded by `retention`; any thread (see this header's opening
/// comment).
class tombstone_table {
public:
    /// How long a tombstone counts, by its own written time: 7 days, as
    /// long as the broker keeps it (stream_max_age).
    static constexpr std::chrono::hours default_retention = stream_max_age;

    /// Throws std::invalid_argument unless 0 < retention.
    explicit tombstone_table(std::chrono::milliseconds retention = default_retention);

    /// Adds `t`; false (nothing kept) when it is already expired at `now`.
    bool add(const tombstone& t, wall_time now);
    /// Whether a copy of `job_id` with `generation` is cancelled at `now`.
    bool covers(std::string_view job_id, std::uint64_t generation, wall_time now) const;
    /// Frees the tombstones expired at `now`; returns how many.
    std::size_t expire(wall_time now);

    /// Calls `f(const tombstone&)` for each job id's entry live at `now`
    /// (its highest generation, its latest written time): what a
    /// checkpoint keeps. Under the table's shared lock: `f` must not call
    /// into the table.
    template <class F>
    void for_each(wall_time now, F&& f) const {
        tombstone t;
        by_id_.for_each(now, [&](std::string_view id, const auto& kept) {
            t.job_id.assign(id);
            t.generation = kept.value;
            t.written = kept.written;
            f(std::as_const(t));
        });
    }

    /// Job ids with a tombstone kept (expired ones until expire()).
    std::size_t size() const;
    /// True when no tombstone is kept: the release path's fast check.
    bool empty() const noexcept { return by_id_.empty(); }
    /// How long a tombstone counts, as given at construction.
    std::chrono::milliseconds retention() const noexcept { return by_id_.retention(); }

private:
    // By job id: the highest generation of its tombstones (the slot's
    // written time is the latest of theirs).
    detail::expiring_table<std::uint64_t> by_id_;
};

}  // namespace tarry::control
