// `tarry topology verify`: checks a broker against a topology and changes
// nothing. Each exchange and queue first with a passive declare (404:
// missing; nothing is created), then declared again with the arguments
// expected, on a channel of its own (the same: ok; the broker's 406 names
// what differs). Bindings cannot be read over AMQP: each is listed as not
// checked. Publishes nothing.
#pragma once

#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/topology.hpp"

#include <string>
#include <vector>

namespace cli {

/// One part of the topology as the broker has it.
struct verified {
    enum class verdict { ok, missing, differs, unchecked, failed };
    verdict what;
    std::string part;    ///< e.g. "queue 'jobs.dead'"
    std::string detail;  ///< the broker's words (differs, failed), or why unchecked
};

/// Checks every part of `t` on `conn` (open), one after the other; waits
/// for each (at most confirm_wait).
std::vector<verified> verify_topology(tarry::amqp::connection& conn, const tarry::amqp::topology& t);

/// One line per part: "ok", "missing", "differs", "not checked" or "cannot
/// check", the part, and the detail.
std::string verification_report(const std::vector<verified>& parts);

/// Whether every checkable part is ok.
bool all_ok(const std::vector<verified>& parts);

}  // namespace cli
