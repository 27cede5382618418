// Lateness by fault kind (see nemesis_lateness.hpp).
#include "nemesis_lateness.hpp"

#include "nemesis_input.hpp"
#include "nemesis_windows.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace nemesis {

std::vector<lateness_row> lateness_by_fault(const std::vector<fault>& faults,
                                            const std::vector<worker_stream>& streams) {
    constexpr micros quiet_before = 30'000'000;
    const fault_windows windows(faults, 0);
    // Each copy's first start.
    std::map<std::tuple<std::string, micros>, std::pair<micros, micros>> first;  // (id, due) -> (due, start)
    for (const auto& stream : streams)
        for (const auto& life : stream.lives)
            for (const auto& e : life.events) {
                if (e.event != "run" || e.attempt != 1) continue;
                const micros at = windows.real_time(stream.worker, e.at);
                auto [it, fresh] = first.try_emplace({e.id, e.due}, e.due, at);
                if (!fresh) it->second.second = std::min(it->second.second, at);
            }
    std::map<std::string, std::vector<double>> late;  // bucket -> ms
    for (const auto& [key, run] : first) {
        const auto [due, start] = run;
        const double ms = static_cast<double>(start - due) / 1000.0;
        bool any = false;
        std::vector<std::string> kinds;
        for (const auto& f : faults) {
            if (f.start <= due && due <= f.end) kinds.emplace_back(to_string(f.kind));
            if (f.start <= due && due <= f.end + quiet_before) any = true;
        }
        std::sort(kinds.begin(), kinds.end());
        kinds.erase(std::unique(kinds.begin(), kinds.end()), kinds.end());
        for (const auto& k : kinds) late[k].push_back(ms);
        if (!any) late["none"].push_back(ms);
    }
    std::vector<lateness_row> rows;
    for (auto& [bucket, v] : late) {
        std::sort(v.begin(), v.end());
        lateness_row r;
        r.bucket = bucket;
        r.runs = v.size();
        r.min_ms = v.front();
        r.p50_ms = v[v.size() / 2];
        r.p99_ms = v[std::min(v.size() - 1, v.size() * 99 / 100)];
        r.max_ms = v.back();
        rows.push_back(r);
    }
    return rows;
}

std::string lateness_text(const std::vector<lateness_row>& rows) {
    std::string out = "lateness of first runs by the fault on at their due time (ms):\n";
    char buf[160];
    std::snprintf(buf, sizeof buf, "  %-15s %8s %10s %10s %10s %10s\n", "fault", "runs", "min", "p50", "p99", "max");
    out += buf;
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof buf, "  %-15s %8zu %10.1f %10.1f %10.1f %10.1f\n", r.bucket.c_str(), r.runs, r.min_ms,
                      r.p50_ms, r.p99_ms, r.max_ms);
        out += buf;
    }
    return out;
}

}  // namespace nemesis
