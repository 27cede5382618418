// Periodic schedules' chains as the workers' events show them: which
// nominal times ran and how often, and which never ran though the chain
// should have reached them (docs/periodic.md, "The chain").
#pragma once

#include "nemesis_records.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nemesis {

/// A first attempt of an occurrence started (a "run" of attempt 1), or a
/// misfired one was skipped: either publishes the successor.
struct occurrence_seen {
    std::string id;  ///< "<schedule>@<nominal>"
    micros at = 0;
};

/// One nominal time of a chain and when it ran (ascending).
struct chain_link {
    micros nominal = 0;
    std::vector<micros> starts;
};

struct chain {
    std::string schedule;
    std::vector<chain_link> links;  ///< by nominal time
    /// Nominal times never run: before the first link (from the first
    /// nominal time after the upsert), between links (from each link's
    /// successor, as periodic::on_release gives it when the link ran), and
    /// after the last link up to `until` (or the schedule's removal).
    std::vector<micros> missing;
};

/// The schedule id and nominal time of occurrence id `id`, when it is one.
std::optional<std::pair<std::string_view, micros>> split_occurrence(std::string_view id);

/// Each schedule's chain. Nominal times after `until` are not expected.
std::vector<chain> follow_chains(const std::vector<schedule_record>& schedules,
                                 const std::vector<occurrence_seen>& seen, micros until);

}  // namespace nemesis
