// The soak's per-interval table and its flat criteria (see soak_table.hpp).
#include "soak_table.hpp"

#include <algorithm>
#include <cmath>

namespace soak {

double nearest_rank(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    const auto n = values.size();
    auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(n)));
    rank = std::clamp<std::size_t>(rank, 1, n);
    std::nth_element(values.begin(), values.begin() + static_cast<long>(rank - 1), values.end());
    return values[rank - 1];
}

interval_table::interval_table(micros start, micros interval, std::size_t rows)
    : start_(start), interval_(interval), lateness_ms_(rows), rows_(rows) {
    for (std::size_t i = 0; i < rows; ++i) rows_[i].index = i + 1;
}

std::optional<std::size_t> interval_table::row_of(micros t) const {
    if (t < start_) return std::nullopt;
    const auto k = static_cast<std::size_t>((t - start_) / interval_);
    if (k >= rows_.size()) return std::nullopt;
    return k;
}

void interval_table::add(const worker_event& e) {
    const auto k = row_of(e.at);
    if (!k) return;
    if (e.event == "run") {
        lateness_ms_[*k].push_back(static_cast<double>(e.at - e.due) / 1000.0);
    } else if (e.event == "retry") {
        ++rows_[*k].retries;
    } else if (e.event == "parked") {
        ++rows_[*k].parked;
    } else if (e.event == "dead") {
        ++rows_[*k].dead;
    }
}

void interval_table::add(const rss_sample& s) {
    if (s.at < start_) return;
    const auto k = static_cast<std::size_t>(std::llround(static_cast<double>(s.at - start_) /
                                                         static_cast<double>(interval_)));
    if (k < 1 || k > rows_.size()) return;
    rows_[k - 1].rss_kb = s.rss_kb;
    rows_[k - 1].load1 = s.load1;
}

std::vector<interval_row> interval_table::rows() const {
    std::vector<interval_row> out = rows_;
    for (std::size_t i = 0; i < out.size(); ++i) {
        const auto& l = lateness_ms_[i];
        out[i].runs = l.size();
        out[i].p50_ms = nearest_rank(l, 0.50);
        out[i].p99_ms = nearest_rank(l, 0.99);
        out[i].max_ms = l.empty() ? 0 : *std::max_element(l.begin(), l.end());
    }
    return out;
}

flatness judge(const std::vector<interval_row>& rows) {
    flatness f;
    if (rows.empty()) return f;
    f.baseline_rows = std::max<std::size_t>(1, rows.size() / 6);
    f.rss_baseline_kb = rows[f.baseline_rows - 1].rss_kb;
    f.rss_last_kb = rows.back().rss_kb;
    f.rss_flat = f.rss_baseline_kb && f.rss_last_kb &&
                 static_cast<double>(*f.rss_last_kb) <= rss_growth_limit * static_cast<double>(*f.rss_baseline_kb);
    // The median of the baseline rows' p99 (the mean of the middle two when
    // their count is even).
    std::vector<double> p99s;
    for (std::size_t i = 0; i < f.baseline_rows; ++i)
        if (rows[i].runs > 0) p99s.push_back(rows[i].p99_ms);
    std::sort(p99s.begin(), p99s.end());
    if (!p99s.empty()) {
        const auto n = p99s.size();
        f.p99_baseline_ms = n % 2 ? p99s[n / 2] : (p99s[n / 2 - 1] + p99s[n / 2]) / 2;
    }
    f.p99_limit_ms = p99_growth_limit * f.p99_baseline_ms;
    for (const auto& r : rows)
        if (r.runs == 0 || r.p99_ms > f.p99_limit_ms) f.rows_over.push_back(r.index);
    f.p99_flat = !p99s.empty() && f.rows_over.empty();
    return f;
}

}  // namespace soak
