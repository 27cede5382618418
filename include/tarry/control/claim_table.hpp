// The run claims of one queue's periodic occurrences, as a consumer knows
// them: the control-stream reader adds each claim it reads, in stream
// order; admission and release ask which copy of an occurrence runs
// (docs/periodic.md, "Run claims").
//
// Promises:
// - winner(o) is the copy named by the first claim of occurrence `o` that
//   was added and is still kept; later claims of `o` never change it. Every
//   reader of the stream adds claims in the same order, so every consumer
//   names the same winner.
// - A claim is kept `retention` after it was written (its own timestamp,
//   the writer's clock); an expired claim is not added, and expire(now)
//   frees the older ones. Memory is bounded by the claims written within
//   `retention`.
// Threads: every member may be called from any thread at once (readers
// share a lock; add and expire take it alone).
#pragma once

#include "tarry/control/expiring_table.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tarry::control {

/// The run claims of one queue's periodic occurrences: which copy of an
/// occurrence runs, the same answer for every consumer; bounded by
/// `retention`; any thread (see this header's opening comment).
class claim_table {
public:
    /// How long a claim counts: a day. A second copy of an occurrence shows
    /// up within minutes of the first (a redelivery, a second successor), so
    /// a day is ample, and an every-second schedule keeps 86 400 claims.
    static constexpr std::chrono::hours default_retention{24};

    /// Throws std::invalid_argument unless 0 < retention.
    explicit claim_table(std::chrono::milliseconds retention = default_retention);

    /// Adds `c`. True when it is now its occurrence's first claim (it wins);
    /// false when an earlier claim of the occurrence is kept (whatever copy
    /// it names), or `c` is already expired at `now` (nothing kept).
    bool add(const run_claim& c, wall_time now);
    /// The copy that runs `occurrence_id`, when a claim of it is kept.
    std::optional<std::string> winner(std::string_view occurrence_id) const;
    /// Frees the claims expired at `now`; returns how many.
    std::size_t expire(wall_time now);
    /// Calls `f(occurrence_id, copy, written)` for each occurrence's winning
    /// claim kept at `now` (string_views valid during the call): what a
    /// checkpoint keeps. Under the table's shared lock: `f` must not call
    /// into the table.
    template <class F>
    void for_each(wall_time now, F&& f) const {
        winners_.for_each(now, [&](std::string_view occurrence, const auto& kept) {
            f(occurrence, std::string_view(kept.value), kept.written);
        });
    }
    /// Occurrences with a claim kept.
    std::size_t size() const;

private:
    // By occurrence id: the copy its first kept claim names.
    detail::expiring_table<std::string> winners_;
};

}  // namespace tarry::control
