// Following the chains of periodic schedules (see nemesis_chains.hpp).
#include "nemesis_chains.hpp"

#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <stdexcept>

namespace nemesis {

namespace {

// A chain cannot have missed more than this many nominal times (a guard
// against walking a bogus span one occurrence at a time).
constexpr std::size_t max_walk = 1'000'000;

tarry::periodic::recurrence compiled(const schedule_record& s) {
    const auto parsed = tarry::periodic::parse_spec(s.spec);
    if (!parsed.spec) throw std::invalid_argument("schedule " + s.id + ": bad spec: " + parsed.detail);
    auto made = tarry::periodic::make_recurrence(*parsed.spec);
    if (!made.schedule) throw std::invalid_argument("schedule " + s.id + ": " + made.detail);
    return std::move(*made.schedule);
}

}  // namespace

std::optional<std::pair<std::string_view, micros>> split_occurrence(std::string_view id) {
    const auto at = id.rfind('@');
    if (at == std::string_view::npos || at == 0) return std::nullopt;
    const auto nominal = tarry::periodic::parse_nominal(id.substr(at + 1));
    if (!nominal) return std::nullopt;
    return std::pair{id.substr(0, at), to_micros(*nominal)};
}

std::vector<chain> follow_chains(const std::vector<schedule_record>& schedules,
                                 const std::vector<occurrence_seen>& seen, micros until) {
    std::vector<chain> chains;
    for (const auto& s : schedules) {
        const auto schedule = compiled(s);
        std::map<micros, std::vector<micros>> starts;
        for (const auto& o : seen) {
            const auto split = split_occurrence(o.id);
            if (split && split->first == s.id) starts[split->second].push_back(o.at);
        }
        chain c{s.id, {}, {}};
        const micros end = std::min(until, s.removal_sent.value_or(std::numeric_limits<micros>::max()));
        // Nominal times from `next` up to (not including) `to` never ran.
        std::optional<tarry::wall_time> next = schedule.first(to_wall(s.added + 250'000));
        auto walk_to = [&](micros to) {
            for (std::size_t n = 0; next && to_micros(*next) < to && to_micros(*next) <= end && n < max_walk; ++n) {
                c.missing.push_back(to_micros(*next));
                next = schedule.next_after(*next);
            }
        };
        for (auto& [nominal, at] : starts) {
            std::sort(at.begin(), at.end());
            walk_to(nominal);
            c.links.push_back({nominal, at});
            const auto number = static_cast<tarry::periodic::occurrence_number>(c.links.size());
            next = tarry::periodic::on_release(schedule, to_wall(nominal), number, to_wall(at.front())).successor;
        }
        walk_to(std::numeric_limits<micros>::max());
        chains.push_back(std::move(c));
    }
    return chains;
}

}  // namespace nemesis
