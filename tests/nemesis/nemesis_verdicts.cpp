// The nemesis checker's verdicts (see nemesis_verdicts.hpp).
#include "nemesis_verdicts.hpp"

#include "nemesis_chains.hpp"
#include "nemesis_windows.hpp"

#include "tarry/consumer/job_event_json.hpp"
#include "tarry/periodic/occurrence.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace nemesis {

namespace {

constexpr std::size_t max_examples = 5;

/// A job event, the worker that wrote it, and its time in real time.
struct seen_event {
    const worker_event* e;
    unsigned worker;
    micros at;
};

std::string quoted(std::string_view id) { return tarry::json_quoted(id); }
std::string time_text(micros t) { return tarry::epoch_seconds_text(to_wall(t)); }
std::string on(const seen_event& s) { return "on worker " + std::to_string(s.worker) + " at " + time_text(s.at); }
std::string run_text(const seen_event& s) {
    return quoted(s.e->id) + " attempt " + std::to_string(s.e->attempt) + " due " + time_text(s.e->due);
}

/// What the judging reads: every job event in stream order, and the runs.
struct run_events {
    std::vector<seen_event> all;
    std::vector<seen_event> runs;
    micros last = std::numeric_limits<micros>::min();  ///< the latest event's time
};

run_events collect(const std::vector<worker_stream>& streams, const fault_windows& windows) {
    run_events out;
    for (const auto& stream : streams)
        for (const auto& life : stream.lives)
            for (const auto& e : life.events) {
                const seen_event s{&e, stream.worker, windows.real_time(stream.worker, e.at)};
                out.all.push_back(s);
                if (e.event == "run") out.runs.push_back(s);
                out.last = std::max(out.last, s.at);
            }
    return out;
}

void judge_timing(const run_events& events, const fault_windows& windows, const options& o, report& r) {
    for (const auto& s : events.runs) {
        if (s.at < s.e->due)
            r.early.add(windows.meets(s.at, s.at, s.worker), windows.clock_stepped(s.worker, s.at),
                        run_text(s) + " started " + on(s));
        if (s.at - s.e->due > o.late) {
            const bool inside = windows.meets(s.e->due, s.at);
            r.late.add(inside, inside,
                       run_text(s) + " started " + on(s) + ", " + std::to_string((s.at - s.e->due) / 1000) +
                           " ms late");
        }
    }
}

/// A cancel, or a reschedule (with the new copy's due time), of one job.
struct command {
    micros confirmed;
    std::optional<micros> new_due;
};

void judge_cancels(const ledger& l, const run_events& events, const fault_windows& windows, const options& o,
                   report& r) {
    std::map<std::string, std::vector<command>, std::less<>> commands;
    for (const auto& c : l.cancels) commands[c.id].push_back({c.confirmed, std::nullopt});
    for (const auto& c : l.reschedules) commands[c.id].push_back({c.confirmed, c.due});
    for (auto& [id, list] : commands)
        std::sort(list.begin(), list.end(), [](const command& a, const command& b) { return a.confirmed < b.confirmed; });
    std::map<std::string, micros, std::less<>> removed;
    for (const auto& s : l.schedules)
        if (s.removed) removed[s.id] = *s.removed;
    // A rescheduled job's new copy: its due time, 1 ms either way (it went
    // through a double of epoch seconds); a retry of it follows its first run.
    auto is_copy = [](micros due, micros copy_due) { return due - copy_due <= 1000 && copy_due - due <= 1000; };
    auto first_run_of_copy = [&](const std::string& id, micros copy_due, micros before) {
        return std::any_of(events.runs.begin(), events.runs.end(), [&](const seen_event& s) {
            return s.e->id == id && s.e->attempt == 1 && is_copy(s.e->due, copy_due) && s.at <= before;
        });
    };
    for (const auto& s : events.runs) {
        std::optional<micros> cancelled;
        if (const auto occurrence = split_occurrence(s.e->id)) {
            const auto it = removed.find(occurrence->first);
            if (it != removed.end() && s.at > it->second + o.cancel_margin) cancelled = it->second;
        } else if (const auto it = commands.find(s.e->id); it != commands.end()) {
            const command* last = nullptr;
            for (const auto& c : it->second)
                if (c.confirmed + o.cancel_margin < s.at) last = &c;
            if (last && !last->new_due) cancelled = last->confirmed;
            if (last && last->new_due) {
                const bool new_copy = s.e->attempt == 1 ? is_copy(s.e->due, *last->new_due)
                                                        : first_run_of_copy(s.e->id, *last->new_due, s.at);
                if (!new_copy) cancelled = last->confirmed;
            }
        }
        if (!cancelled) continue;
        const bool inside = windows.meets(*cancelled, s.at, s.worker);
        r.after_cancel.add(inside, inside, run_text(s) + " started " + on(s) + ", cancelled " + time_text(*cancelled));
    }
}

/// Chains: the gaps, and the occurrence ids whose repeats are forks.
std::set<std::string> judge_chains(const ledger& l, const run_events& events, const fault_windows& windows,
                                   micros until, report& r) {
    std::vector<occurrence_seen> seen;
    for (const auto& s : events.all)
        if ((s.e->event == "run" && s.e->attempt == 1) || s.e->event == "skipped") seen.push_back({s.e->id, s.at});
    std::set<std::string> forked;
    for (const auto& c : follow_chains(l.schedules, seen, until)) {
        r.jobs += c.links.size();
        std::optional<micros> removal;  // when the schedule's removal was first sent
        for (const auto& s : l.schedules)
            if (s.id == c.schedule) removal = s.removal_sent;
        for (const micros nominal : c.missing) {
            // A chain a fault held up, removed while a fault was still on:
            // what it missed was owed to a schedule that no longer is.
            const bool inside = windows.meets(nominal, nominal);
            const bool explained = inside && removal && windows.meets(*removal, *removal);
            r.chain_gap.add(inside, explained,
                            tarry::periodic::occurrence_id(c.schedule, to_wall(nominal)) + " never ran");
        }
        for (std::size_t i = 1; i < c.links.size(); ++i)
            if (c.links[i].starts.size() > 1 && c.links[i - 1].starts.size() > 1)
                forked.insert(tarry::periodic::occurrence_id(c.schedule, to_wall(c.links[i].nominal)));
    }
    return forked;
}

/// Whether a `failed` copy may have reached its queue all the same: its
/// confirm was lost with the connection. Not when the broker refused it
/// (basic.nack: not stored) or it was never sent (not connected).
bool copy_outcome_unknown(const worker_event& e) {
    return e.event == "failed" && e.reason.find("basic.nack") == std::string::npos &&
           e.reason.find("not connected") == std::string::npos;
}

/// Two parks of one copy closer than this were two copies of it, parked
/// side by side. One copy waits its wait queue's TTL between parks: the
/// nemesis's workers (hold horizon 30 s) park only jobs due more than 30 s
/// ahead, always into the 16 s rung, so one copy's parks are at least 16 s
/// apart. Two copies trail each other by what the broker took to send the
/// second: its at-least-once dead-lettering resends after its 10 s confirm
/// timeout (the scripts' nodes), so by up to about 12 s; parked in 16 s
/// hops, the two give gaps of d and 16 - d, one of them at most 8 s.
constexpr micros side_by_side = 12'000'000;

/// When a parked copy came to exist twice: the hop, from the last park of
/// the single copy to the first two parks side by side, if there are two.
std::optional<std::pair<micros, micros>> doubled_hop(std::vector<micros> parks) {
    std::sort(parks.begin(), parks.end());
    for (std::size_t k = 1; k < parks.size(); ++k)
        if (parks[k] - parks[k - 1] < side_by_side) return std::pair{k >= 2 ? parks[k - 2] : parks[k - 1], parks[k]};
    return std::nullopt;
}

/// Copies (id, attempt, due) run more than once: duplicates, or forks. A
/// duplicate is explained when its first run began in a fault window, or
/// when the broker may have come to hold that copy twice: a worker
/// dropped a delivery of it in a fault window (`dropped`: its channel was
/// lost while a copy of it was in flight), a copy of it failed there with
/// its outcome unknown and was published again, a reschedule's try whose
/// confirm was lost made it (the ledger's `unconfirmed`), or it came to be
/// parked twice side by side after a hop through a wait queue that met a
/// fault window (the broker's at-least-once dead-lettering, or a park
/// copy's lost confirm, sent again). Both then run at the due time,
/// however long after the fault.
void judge_repeats(const ledger& l, const run_events& events, const std::set<std::string>& forked,
                   const fault_windows& windows, report& r) {
    using copy_key = std::tuple<std::string_view, std::uint32_t, micros>;
    std::map<copy_key, std::vector<seen_event>> copies;
    for (const auto& s : events.runs) copies[{s.e->id, s.e->attempt, s.e->due}].push_back(s);
    std::set<copy_key> maybe_stored_twice;
    std::map<copy_key, std::vector<micros>> parks;
    for (const auto& s : events.all) {
        if ((s.e->event == "dropped" || copy_outcome_unknown(*s.e)) && windows.meets(s.at, s.at, s.worker))
            maybe_stored_twice.insert({s.e->id, s.e->attempt, s.e->due});
        if (s.e->event == "parked") parks[{s.e->id, s.e->attempt, s.e->due}].push_back(s.at);
    }
    for (const auto& c : l.unconfirmed) maybe_stored_twice.insert({c.id, 1u, c.due});
    for (const auto& [copy, at] : parks)
        if (const auto hop = doubled_hop(at); hop && windows.meets(hop->first, hop->second))
            maybe_stored_twice.insert(copy);
    for (auto& [copy, runs] : copies) {
        std::stable_sort(runs.begin(), runs.end(), [](const seen_event& a, const seen_event& b) { return a.at < b.at; });
        const auto& first = runs.front();
        const bool fork = first.e->attempt == 1 && forked.count(first.e->id) > 0;
        for (std::size_t k = 1; k < runs.size(); ++k) {
            const std::string example = run_text(first) + " ran " + on(first) + " and " + on(runs[k]);
            if (fork) {
                r.chain_fork.add(windows.meets(first.at, runs[k].at), false, example);
            } else {
                const bool inside =
                    windows.meets(first.at, runs[k].at, first.worker) || maybe_stored_twice.count(copy) > 0;
                r.duplicate.add(inside, inside, example);
            }
        }
    }
}

void judge_ends(const ledger& l, const run_events& events, const fault_windows& windows, const options& o,
                micros until, report& r) {
    struct seen_job {
        std::size_t runs = 0, succeeded = 0, dead = 0;
        std::optional<micros> last_start;
        micros latest_due = std::numeric_limits<micros>::min();
    };
    std::map<std::string_view, seen_job> jobs;
    for (const auto& s : events.all) {
        auto& j = jobs[s.e->id];
        if (s.e->event == "run") {
            ++j.runs;
            j.last_start = std::max(j.last_start.value_or(s.at), s.at);
        }
        if (s.e->event == "succeeded") ++j.succeeded;
        if (s.e->event == "dead") ++j.dead;
        if (s.e->next_due) j.latest_due = std::max(j.latest_due, *s.e->next_due);
    }
    std::set<std::string_view> cancelled;
    for (const auto& c : l.cancels) cancelled.insert(c.id);
    for (const auto& job : l.jobs) {
        const auto& j = jobs[job.id];
        micros due = std::max(job.due, j.latest_due);
        for (const auto& c : l.reschedules)
            if (c.id == job.id) due = std::max(due, c.due);
        if (!cancelled.count(job.id) && due > until) {
            ++r.pending;
            continue;
        }
        ++r.jobs;
        if (cancelled.count(job.id)) continue;
        const bool meant_dead = job.fails >= o.max_attempts;
        if (meant_dead ? j.dead > 0 : j.succeeded > 0) continue;
        const micros t = j.last_start.value_or(due);
        r.lost.add(windows.meets(t, t + o.grace), false,
                   quoted(job.id) + " due " + time_text(due) + ": runs " + std::to_string(j.runs) + ", succeeded " +
                       std::to_string(j.succeeded) + ", dead-lettered " + std::to_string(j.dead) + "; meant to " +
                       (meant_dead ? "be dead-lettered" : "succeed"));
    }
}

void judge_crashes(const std::vector<worker_stream>& streams, const std::vector<fault>& faults,
                   const fault_windows& windows, report& r) {
    constexpr micros slack = 1'000'000;
    std::vector<bool> used(faults.size(), false);
    for (const auto& stream : streams) {
        // The first and last event time of each life (real time).
        std::vector<std::optional<std::pair<micros, micros>>> spans;
        for (const auto& life : stream.lives) {
            std::optional<std::pair<micros, micros>> span;
            for (const auto& e : life.events) {
                const micros t = windows.real_time(stream.worker, e.at);
                span = span ? std::pair{std::min(span->first, t), std::max(span->second, t)} : std::pair{t, t};
            }
            spans.push_back(span);
        }
        for (std::size_t i = 0; i < stream.lives.size(); ++i) {
            if (stream.lives[i].stopped) continue;
            micros after = std::numeric_limits<micros>::min(), before = std::numeric_limits<micros>::max();
            for (std::size_t k = 0; k <= i; ++k)
                if (spans[k]) after = spans[k]->second - slack;
            for (std::size_t k = stream.lives.size(); k-- > i + 1;)
                if (spans[k]) before = spans[k]->first + slack;
            bool matched = false;
            for (std::size_t f = 0; f < faults.size() && !matched; ++f) {
                const auto& kill = faults[f];
                if (used[f] || kill.kind != fault_kind::worker_kill || kill.target != stream.worker) continue;
                if (kill.start < after || kill.start > before) continue;
                used[f] = matched = true;
            }
            r.crash.add(matched, matched,
                        "worker " + std::to_string(stream.worker) + ", life " + std::to_string(i + 1) + " of " +
                            std::to_string(stream.lives.size()) + ": no \"stopped\" line" +
                            (spans[i] ? ", last event at " + time_text(spans[i]->second) : std::string()));
        }
    }
}

}  // namespace

void verdict::add(bool in_window, bool explained, std::string example) {
    ++count;
    if (in_window) ++inside;
    if (explained) return;
    ++unexplained;
    if (examples.size() < max_examples) examples.push_back(std::move(example));
}

std::string verdict::line() const {
    return "verdict " + name + ": " + std::to_string(count) + " (" + std::to_string(inside) +
           " inside fault windows, " + std::to_string(unexplained) + " unexplained)";
}

std::array<const verdict*, 8> report::all() const {
    return {&lost, &early, &after_cancel, &chain_gap, &chain_fork, &duplicate, &late, &crash};
}

std::string report::text() const {
    std::string out;
    for (const auto* v : all()) {
        out += v->line() + "\n";
        for (const auto& e : v->examples) out += "  " + e + "\n";
    }
    if (pending > 0) out += "not judged: " + std::to_string(pending) + " jobs due too close to the end of the streams\n";
    out += "checked " + std::to_string(jobs) + " jobs, " + std::to_string(runs) + " runs, " + std::to_string(faults) +
           " faults\n";
    return out;
}

int report::exit_code() const {
    for (const auto* v : all())
        if (v->unexplained > 0) return 1;
    return 0;
}

report judge(const ledger& ledger, const std::vector<fault>& faults, const std::vector<worker_stream>& streams,
             const options& o) {
    report r;
    r.faults = faults.size();
    const fault_windows windows(faults, o.grace);
    const auto events = collect(streams, windows);
    r.runs = events.runs.size();
    // With no event at all, nothing was under way at the end: judge everything.
    const micros until = events.all.empty() ? std::numeric_limits<micros>::max() : events.last - o.settle;
    judge_timing(events, windows, o, r);
    judge_cancels(ledger, events, windows, o, r);
    judge_repeats(ledger, events, judge_chains(ledger, events, windows, until, r), windows, r);
    judge_ends(ledger, events, windows, o, until, r);
    judge_crashes(streams, faults, windows, r);
    return r;
}

}  // namespace nemesis
