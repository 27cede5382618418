// The held jobs as consumer::held_jobs() and consumer_metrics::next_due show
// them, read from the delay queue under its lock: a page after a cursor
// (held_jobs_cursor.hpp) in the queue's listing order - the ready path (due
// at arrival, waiting for a worker) first, then the held jobs by due time -
// decoding only the message_id of the jobs on the page.
#pragma once

#include "core/held_job.hpp"
#include "held_jobs_cursor.hpp"

#include "tarry/consumer/consumer_metrics.hpp"
#include "tarry/schedule/delay_queue.hpp"

#include <algorithm>
#include <limits>
#include <string_view>
#include <system_error>

namespace tarry::detail {

/// Up to `limit` (at most held_jobs_max_limit) jobs after the cursor
/// `after` ("": from the first). `limit` 0: no job, and `next` is `after`
/// itself. An `after` that does not decode: ec = invalid_argument and an
/// empty page.
template <class Clock>
held_jobs_page list_held_jobs(const delay_queue<held_job, Clock>& q, std::size_t limit, std::string_view after,
                              std::error_code& ec) {
    ec.clear();
    held_jobs_page page;
    std::optional<queue_place> from;
    if (!after.empty()) {
        from = decode_cursor(after);
        if (!from) {
            ec = std::make_error_code(std::errc::invalid_argument);
            return page;
        }
    }
    page.held = q.size();
    if (limit == 0) {
        page.next = std::string(after);
        return page;
    }
    limit = std::min(limit, held_jobs_max_limit);
    page.jobs.reserve(limit);
    queue_place last{};
    bool more = false;
    // One more than the page, to tell the last page from a full one.
    q.visit(from, limit + 1, [&](const queue_place& at, const held_job& j) {
        if (page.jobs.size() == limit) {
            more = true;
            return;
        }
        page.jobs.push_back({j.msg.message_id().value_or(std::string()), j.due, j.attempt, j.lane});
        last = at;
    });
    if (more) page.next = encode_cursor(last);
    return page;
}

/// The earliest due time of the held jobs (the ready path's oldest
/// arrival and the first held job by due time); empty when none is held.
template <class Clock>
std::optional<wall_time> next_due(const delay_queue<held_job, Clock>& q) {
    std::optional<wall_time> due;
    const auto earliest = [&due](const queue_place&, const held_job& j) {
        if (!due || j.due < *due) due = j.due;
    };
    q.visit(std::nullopt, 1, earliest);
    q.visit(queue_place{true, 0, std::numeric_limits<std::uint64_t>::max()}, 1, earliest);
    return due;
}

}  // namespace tarry::detail
