// What the nemesis checker reads, as values: the publisher's ledger, the
// fault log and each worker's event stream (their text formats:
// nemesis_input.hpp, docs/reliability.md "The nemesis checker"). Times are
// whole microseconds since the Unix epoch.
#pragma once

#include "tarry/time/time_points.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nemesis {

/// Microseconds since the Unix epoch (or a span of them).
using micros = std::int64_t;

inline tarry::wall_time to_wall(micros t) { return tarry::wall_time(std::chrono::microseconds(t)); }
inline micros to_micros(tarry::wall_time t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

/// A job the broker confirmed: due then, its header x-echo-fail = fails.
struct job_record {
    std::string id;
    micros due = 0;
    std::uint32_t fails = 0;
};
/// A cancel (publisher::async_cancel) of a job, confirmed then.
struct cancel_record {
    std::string id;
    micros confirmed = 0;
};
/// A reschedule (publisher::async_reschedule): the job's new copy is due
/// then; tombstone and copy confirmed at `confirmed`.
struct reschedule_record {
    std::string id;
    micros due = 0;
    micros confirmed = 0;
};
/// A try of a reschedule that was not confirmed (it was then sent again):
/// its copy, due `due`, may have been stored all the same.
struct unconfirmed_copy {
    std::string id;
    micros due = 0;
};
/// A periodic schedule: upserted (confirmed) at `added`, its spec in
/// periodic::to_string's words, removed (confirmed) at `removed` if it was,
/// that removal first sent at `removal_sent` (set with `removed`; a try not
/// confirmed may have taken effect: the chain may end from then on).
struct schedule_record {
    std::string id;
    micros added = 0;
    std::string spec;
    std::optional<micros> removed;
    std::optional<micros> removal_sent;
};

/// The publisher's ledger: every command the broker confirmed.
struct ledger {
    std::vector<job_record> jobs;
    std::vector<cancel_record> cancels;
    std::vector<reschedule_record> reschedules;
    std::vector<unconfirmed_copy> unconfirmed;
    std::vector<schedule_record> schedules;
};

enum class fault_kind { worker_kill, node_kill, partition, pause, connection_cut, clock_step };

/// One fault the nemesis injected, from its start until it was healed.
struct fault {
    micros start = 0;
    micros end = 0;
    fault_kind kind = fault_kind::node_kill;
    unsigned target = 0;                ///< a worker's number, or a node's (by kind)
    std::vector<micros> consumed_again; ///< when its worker consumed again, when known
    std::optional<micros> step;         ///< clock-step: how far the worker's clock was set ahead (< 0: behind)
};
/// Whether faults of this kind target a worker (else a node).
inline bool targets_worker(fault_kind k) {
    return k == fault_kind::worker_kill || k == fault_kind::connection_cut || k == fault_kind::clock_step;
}

/// One job event line of echo_worker (run, succeeded, retry, dead, ...).
struct worker_event {
    std::string event;
    std::string id;
    micros due = 0;
    micros at = 0;
    std::uint32_t attempt = 1;
    std::optional<micros> next_due;
    std::string reason;  // failed, dropped, ...: the worker's words
};

/// A worker process's life: its events from its "ready" line on, and
/// whether it ended with its "stopped" line.
struct worker_life {
    std::vector<worker_event> events;
    bool stopped = false;
};

/// One worker's stream: every life of the worker, restarts appended.
struct worker_stream {
    unsigned worker = 0;
    std::vector<worker_life> lives;
};

}  // namespace nemesis
