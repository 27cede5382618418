// Reading the nemesis checker's three inputs, one record a line. Blank
// lines and lines starting with '#' are skipped in the ledger and the fault
// log. Times are epoch microseconds, whole numbers; ids hold no spaces.
//
// The ledger (the publisher's; one line per confirmed command):
//   job ID DUE_US FAILS                  a job, its x-echo-fail = FAILS
//   cancel ID CONFIRMED_US               a cancel of job ID
//   reschedule ID NEW_DUE_US CONFIRMED_US
//   schedule ID ADDED_US SPEC...         SPEC as periodic::to_string writes it
//                                        ("every 1000ms", "cron * * * * *")
//   unschedule ID REMOVED_US             after its schedule line
//
// The fault log (the nemesis's; one line per fault):
//   START_US END_US KIND TARGET [consumed=US]... [step-ms=N]
// KIND: worker-kill, connection-cut, clock-step (TARGET: a worker's number)
// or node-kill, partition, pause (TARGET: a node's). END_US: when it was
// healed. consumed=: when the worker consumed again (known for a worker
// fault; may repeat). step-ms=: a clock-step's step, + ahead, - behind.
//
// A worker stream: echo_worker's stdout, each restart appended: a "ready"
// line starts a life, "stopped" ends it. A line cut short (a kill) is
// skipped at the end of the stream, before a "ready" line, or where a
// "ready" line was appended to it.
//
// Anything else is an input_error "NAME:LINE: what: the line".
#pragma once

#include "nemesis_records.hpp"

#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nemesis {

/// A malformed line; what() names the file and the line.
struct input_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

ledger read_ledger(std::istream& in, const std::string& name);
std::vector<fault> read_faults(std::istream& in, const std::string& name);
worker_stream read_worker_stream(std::istream& in, const std::string& name, unsigned worker);

/// The last number in a file's name ("logs/worker-3.jsonl": 3), if any.
std::optional<unsigned> worker_number(std::string_view path);

/// "worker-kill", ... as the fault log writes them.
const char* to_string(fault_kind k);

}  // namespace nemesis
