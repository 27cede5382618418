// The tally of a contender's job starts (see lateness_tally.hpp).
#include "lateness_tally.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <unordered_set>

namespace cbench {

namespace {

/// The next space-separated word of `s` from `at`, advancing `at`.
std::string_view word(std::string_view s, std::size_t& at) {
    while (at < s.size() && s[at] == ' ') ++at;
    const auto from = at;
    while (at < s.size() && s[at] != ' ' && s[at] != '\n' && s[at] != '\r') ++at;
    return s.substr(from, at - from);
}

std::optional<double> number(std::string_view w) {
    if (w.empty()) return std::nullopt;
    const std::string text(w);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size()) return std::nullopt;
    return v;
}

}  // namespace

std::optional<job_start> parse_start_line(std::string_view line) {
    std::size_t at = 0;
    if (word(line, at) != "run") return std::nullopt;
    const auto id = word(line, at);
    const auto start = number(word(line, at));
    const auto due_word = word(line, at);
    if (id.empty() || !start || due_word.empty()) return std::nullopt;
    job_start s{std::string(id), *start, std::nullopt};
    if (due_word != "-") {
        s.due_s = number(due_word);
        if (!s.due_s) return std::nullopt;
    }
    return s;
}

bool counted_jobs::counts(std::string_view id) const {
    if (id.size() <= prefix.size() || id.substr(0, prefix.size()) != prefix) return false;
    std::size_t index = 0;
    const auto* first = id.data() + prefix.size();
    const auto* last = id.data() + id.size();
    const auto r = std::from_chars(first, last, index);
    return r.ec == std::errc() && r.ptr == last && index < count;
}

tally tally_starts(std::vector<job_start> starts, const counted_jobs& jobs) {
    std::sort(starts.begin(), starts.end(), [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
    tally t;
    t.expected = jobs.count;
    std::unordered_set<std::string> seen;
    std::size_t in_time = 0;
    for (const auto& s : starts) {
        if (!jobs.counts(s.id)) continue;
        if (!seen.insert(s.id).second) {
            ++t.duplicates;
            continue;
        }
        if (t.started++ == 0) t.first_start_s = s.start_s;
        t.last_start_s = s.start_s;
        if (!s.due_s) {
            ++in_time;
            continue;
        }
        const double late_ms = (s.start_s - *s.due_s) * 1000;
        if (late_ms > jobs.grace_s * 1000) continue;
        if (late_ms < 0) ++t.early;
        t.late_ms.push_back(late_ms);
        ++in_time;
    }
    t.not_run = jobs.count - std::min(jobs.count, in_time);
    return t;
}

double start_rate(const tally& t) {
    if (t.started < 2 || t.last_start_s <= t.first_start_s) return 0;
    return static_cast<double>(t.started) / (t.last_start_s - t.first_start_s);
}

}  // namespace cbench
