// Replay: moves dead letters back to their work queue, to run again from
// attempt 1 (after the bug that killed them is fixed).
#pragma once

#include "tarry/amqp/connection.hpp"

#include <cstddef>
#include <limits>
#include <string>

namespace tarry {

/// Which dead letters replay_dead_letters moves, from where to where.
struct replay_options {
    /// The work queue the dead letters go back to. Required.
    std::string queue;
    /// Where they are. Empty: `<queue>.dead`.
    std::string dead_letter_queue;
    /// Only dead letters whose x-tarry-reason starts with this (such as
    /// "attempts-exhausted"). Empty: all. Dead letters of unreadable
    /// messages (reason "unreadable: ...") are never replayed: they hold no
    /// job that could run (see docs/consumer.md); they are skipped.
    std::string reason_prefix;
    /// At most this many are moved.
    std::size_t limit = std::numeric_limits<std::size_t>::max();
};

/// What replay_dead_letters did.
struct replay_result {
    std::size_t moved = 0;    ///< republished to the queue (confirmed), then removed
    std::size_t skipped = 0;  ///< left in the dead-letter queue (filter or limit)
};

/// Takes each message from the dead-letter queue once; a match is
/// republished to the work queue without tarry's x-tarry-* headers (so its
/// attempt count starts again), with a new x-tarry-generation (the replay's
/// time: a cancel written before the replay does not drop it), and without
/// the broker's death headers,
/// confirmed, and only then removed; the rest stay where they were. Blocks;
/// call it from any thread but the connection's I/O thread. `conn` must be
/// open. Throws tarry::error (code and diagnostics of what failed; an empty
/// queue name is std::errc::invalid_argument); what was moved before
/// stays moved, nothing is lost (a failure between the confirm and the
/// removal leaves a duplicate, never a gap).
replay_result replay_dead_letters(amqp::connection& conn, const replay_options& options);

}  // namespace tarry
