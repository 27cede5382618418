// Reading the nemesis checker's inputs (see nemesis_input.hpp).
#include "nemesis_input.hpp"

#include "json_line.hpp"
#include "tarry/periodic/recurrence.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <set>
#include <utility>

namespace nemesis {

namespace {

[[noreturn]] void fail(const std::string& name, std::size_t line_no, std::string_view line, const std::string& what) {
    std::string shown(line.substr(0, 160));
    if (line.size() > shown.size()) shown += "...";
    throw input_error(name + ":" + std::to_string(line_no) + ": " + what + ": " + shown);
}

/// The lines of `in`, each without a trailing '\r'.
std::vector<std::string> lines_of(std::istream& in) {
    std::vector<std::string> lines;
    for (std::string text; std::getline(in, text);) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        lines.push_back(std::move(text));
    }
    return lines;
}

bool blank_or_comment(std::string_view line) {
    const auto first = line.find_first_not_of(" \t");
    return first == std::string_view::npos || line[first] == '#';
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    for (std::size_t i = 0; i < line.size();) {
        const auto start = line.find_first_not_of(" \t", i);
        if (start == std::string_view::npos) break;
        const auto end = std::min(line.find_first_of(" \t", start), line.size());
        out.push_back(line.substr(start, end - start));
        i = end;
    }
    return out;
}

/// A whole word as a number of type T, or nothing.
template <class T>
std::optional<T> number(std::string_view w) {
    T v{};
    if (!w.empty() && w.front() == '+') w.remove_prefix(1);
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (w.empty() || ec != std::errc() || end != w.data() + w.size()) return std::nullopt;
    return v;
}

constexpr std::pair<const char*, fault_kind> fault_kinds[] = {
    {"worker-kill", fault_kind::worker_kill}, {"node-kill", fault_kind::node_kill},
    {"partition", fault_kind::partition},     {"pause", fault_kind::pause},
    {"connection-cut", fault_kind::connection_cut}, {"clock-step", fault_kind::clock_step},
};

/// One line's reader: its words and its errors, which name the line.
struct line_reader {
    const std::string& name;
    std::size_t no;
    std::string_view text;
    std::vector<std::string_view> w = words(text);

    [[noreturn]] void bad(const std::string& what) const { fail(name, no, text, what); }
    micros time(std::size_t i, const char* what) const {
        const auto t = number<micros>(w[i]);
        if (!t || *t < 0) bad(std::string(what) + " is not a time in epoch microseconds");
        return *t;
    }
    void expect_words(std::size_t n, const char* shape) const {
        if (w.size() != n) bad(std::string("expected '") + shape + "'");
    }
};

}  // namespace

const char* to_string(fault_kind k) {
    for (const auto& [text, kind] : fault_kinds)
        if (kind == k) return text;
    return "?";
}

ledger read_ledger(std::istream& in, const std::string& name) {
    ledger l;
    std::set<std::string, std::less<>> job_ids;
    const auto lines = lines_of(in);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (blank_or_comment(lines[i])) continue;
        const line_reader r{name, i + 1, lines[i]};
        const std::string_view record = r.w[0];
        if (record == "job") {
            r.expect_words(4, "job ID DUE_US FAILS");
            const auto fails = number<std::uint32_t>(r.w[3]);
            if (!fails) r.bad("FAILS is not a count");
            if (!job_ids.emplace(r.w[1]).second) r.bad("job given twice");
            l.jobs.push_back({std::string(r.w[1]), r.time(2, "DUE_US"), *fails});
        } else if (record == "cancel") {
            r.expect_words(3, "cancel ID CONFIRMED_US");
            l.cancels.push_back({std::string(r.w[1]), r.time(2, "CONFIRMED_US")});
        } else if (record == "reschedule") {
            r.expect_words(4, "reschedule ID NEW_DUE_US CONFIRMED_US");
            l.reschedules.push_back({std::string(r.w[1]), r.time(2, "NEW_DUE_US"), r.time(3, "CONFIRMED_US")});
        } else if (record == "unconfirmed") {
            r.expect_words(3, "unconfirmed ID NEW_DUE_US");
            l.unconfirmed.push_back({std::string(r.w[1]), r.time(2, "NEW_DUE_US")});
        } else if (record == "schedule") {
            if (r.w.size() < 4) r.bad("expected 'schedule ID ADDED_US SPEC'");
            const std::string spec(r.text.substr(static_cast<std::size_t>(r.w[3].data() - r.text.data())));
            const auto parsed = tarry::periodic::parse_spec(spec);
            if (!parsed.spec) r.bad("bad schedule spec (" + parsed.detail + ")");
            for (const auto& s : l.schedules)
                if (s.id == r.w[1]) r.bad("schedule given twice");
            l.schedules.push_back({std::string(r.w[1]), r.time(2, "ADDED_US"), spec, std::nullopt, std::nullopt});
        } else if (record == "unschedule") {
            if (r.w.size() != 3 && r.w.size() != 4) r.bad("expected 'unschedule ID REMOVED_US [FIRST_SENT_US]'");
            schedule_record* found = nullptr;
            for (auto& s : l.schedules)
                if (s.id == r.w[1]) found = &s;
            if (!found) r.bad("no schedule line before it");
            if (found->removed) r.bad("schedule removed twice");
            found->removed = r.time(2, "REMOVED_US");
            found->removal_sent = r.w.size() == 4 ? r.time(3, "FIRST_SENT_US") : *found->removed;
            if (*found->removal_sent > *found->removed) r.bad("FIRST_SENT_US after REMOVED_US");
        } else {
            r.bad("unknown record (job, cancel, reschedule, unconfirmed, schedule, unschedule)");
        }
    }
    return l;
}

std::vector<fault> read_faults(std::istream& in, const std::string& name) {
    std::vector<fault> faults;
    const auto lines = lines_of(in);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (blank_or_comment(lines[i])) continue;
        const line_reader r{name, i + 1, lines[i]};
        if (r.w.size() < 4) r.bad("expected 'START_US END_US KIND TARGET [consumed=US]... [step-ms=N]'");
        fault f;
        f.start = r.time(0, "START_US");
        f.end = r.time(1, "END_US");
        if (f.end < f.start) r.bad("healed before it started");
        const auto* known = std::find_if(std::begin(fault_kinds), std::end(fault_kinds),
                                         [&](const auto& k) { return r.w[2] == k.first; });
        if (known == std::end(fault_kinds))
            r.bad("unknown kind (worker-kill, node-kill, partition, pause, connection-cut, clock-step)");
        f.kind = known->second;
        const auto target = number<unsigned>(r.w[3]);
        if (!target) r.bad("TARGET is not a worker's or node's number");
        f.target = *target;
        for (std::size_t k = 4; k < r.w.size(); ++k) {
            const std::string_view extra = r.w[k];
            if (extra.starts_with("consumed=")) {
                const auto t = number<micros>(extra.substr(9));
                if (!t || *t < 0) r.bad("consumed= is not a time in epoch microseconds");
                f.consumed_again.push_back(*t);
            } else if (extra.starts_with("step-ms=") && f.kind == fault_kind::clock_step) {
                const auto step = number<std::int64_t>(extra.substr(8));
                if (!step) r.bad("step-ms= is not a number of milliseconds");
                f.step = *step * 1000;
            } else {
                r.bad("unknown field '" + std::string(extra) + "' (consumed=US, step-ms=N on a clock-step)");
            }
        }
        faults.push_back(std::move(f));
    }
    return faults;
}

worker_stream read_worker_stream(std::istream& in, const std::string& name, unsigned worker) {
    // How echo_worker starts its "ready" line.
    constexpr std::string_view ready_line = "{\"event\":\"ready\"";
    worker_stream out{worker, {}};
    auto life = [&]() -> worker_life& {
        if (out.lives.empty()) out.lives.emplace_back();
        return out.lives.back();
    };
    const auto lines = lines_of(in);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        std::string_view text = lines[i];
        if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
        auto fields = json_line::parse(text);
        if (!fields) {
            // Cut short by a kill: the restart's "ready" appended to it, or
            // on the next line, or nothing after it.
            const auto ready_at = text.find(ready_line, 1);
            if (ready_at != std::string_view::npos) {
                text = text.substr(ready_at);
                fields = json_line::parse(text);
            } else if (i + 1 == lines.size() || std::string_view(lines[i + 1]).starts_with(ready_line)) {
                continue;
            }
            if (!fields) fail(name, i + 1, lines[i], "not an echo_worker line (one flat JSON object)");
        }
        auto field = [&](const char* key) -> const std::string* {
            const auto it = fields->find(key);
            return it == fields->end() ? nullptr : &it->second;
        };
        auto time = [&](const char* key) {
            const auto* v = field(key);
            const auto t = v ? json_line::epoch_micros(*v) : std::nullopt;
            if (!t) fail(name, i + 1, lines[i], std::string("no \"") + key + "\" in epoch seconds");
            return *t;
        };
        const auto* event = field("event");
        if (!event) fail(name, i + 1, lines[i], "no \"event\"");
        if (*event == "ready") {
            out.lives.emplace_back();
            continue;
        }
        if (*event == "stopped") {
            life().stopped = true;
            continue;
        }
        worker_event e;
        e.event = *event;
        const auto* id = field("id");
        if (!id) fail(name, i + 1, lines[i], "no \"id\"");
        e.id = *id;
        e.due = time("due");
        e.at = time("at");
        const auto* attempt = field("attempt");
        const auto n = attempt ? number<std::uint32_t>(*attempt) : std::nullopt;
        if (!n || *n == 0) fail(name, i + 1, lines[i], "no \"attempt\" from 1");
        e.attempt = *n;
        if (field("next_due")) e.next_due = time("next_due");
        if (const auto* why = field("reason")) e.reason = *why;
        life().events.push_back(std::move(e));
    }
    return out;
}

std::optional<unsigned> worker_number(std::string_view path) {
    const auto slash = path.find_last_of('/');
    const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const auto last_digit = file.find_last_of("0123456789");
    if (last_digit == std::string_view::npos) return std::nullopt;
    const auto before = file.find_last_not_of("0123456789", last_digit);
    const auto first_digit = before == std::string_view::npos ? 0 : before + 1;
    return number<unsigned>(file.substr(first_digit, last_digit + 1 - first_digit));
}

}  // namespace nemesis
