// GET /: the status page (see the header). Server-rendered HTML with
// inline CSS and SVG; no script, no external assets.
#include "status_page.hpp"

#include "utf8_text.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <numeric>

namespace tarry::http_detail {

void status_history::add(status_sample s) {
    samples_.push_back(std::move(s));
    while (samples_.size() > capacity_) samples_.pop_front();
}

namespace {

constexpr int chart_width = 640;
constexpr int chart_height = 160;
constexpr int chart_pad = 24;  // room for the axis labels

std::string html(std::string_view s) {
    std::string out;
    for (const char c : valid_utf8(s)) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string fixed(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", v);
    return text;
}

std::string utc_time(wall_time t) {
    const std::time_t s = std::chrono::system_clock::to_time_t(std::chrono::floor<std::chrono::seconds>(t));
    std::tm tm{};
    gmtime_r(&s, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return text;
}

// 0.00025 -> "250µs", 0.001 -> "1ms", 60 -> "60s".
std::string short_seconds(double s) {
    char text[32];
    if (s < 1e-3) std::snprintf(text, sizeof text, "%gµs", s * 1e6);
    else if (s < 1) std::snprintf(text, sizeof text, "%gms", s * 1e3);
    else std::snprintf(text, sizeof text, "%gs", s);
    return text;
}

// Parked in all wait queues; empty when a count is unknown (or there are none).
std::optional<std::uint64_t> parked_total(std::span<const parked_count> parked) {
    if (parked.empty()) return std::nullopt;
    std::uint64_t total = 0;
    for (const auto& p : parked) {
        if (!p.messages) return std::nullopt;
        total += *p.messages;
    }
    return total;
}

std::string card(std::string_view label, std::string_view attribute, std::optional<std::uint64_t> v) {
    const std::string value = v ? std::to_string(*v) : "";
    return "<div class=\"card\" data-" + std::string(attribute) + "=\"" + value + "\"><b>" +
           (v ? value : "?") + "</b><span>" + std::string(label) + "</span></div>\n";
}

// One polyline per run of samples where `value` is known; time runs from
// the first sample (left) to `end` (right).
template <class Value>
std::string lines(const std::deque<status_sample>& samples, wall_time end, Value value, double max,
                  const char* css) {
    const auto first = samples.front().at;
    const double span = std::chrono::duration<double>(end - first).count();
    std::string out, points;
    const auto flush = [&] {
        if (!points.empty()) out += "<polyline class=\"" + std::string(css) + "\" points=\"" + points + "\"/>";
        points.clear();
    };
    for (const auto& s : samples) {
        const std::optional<std::uint64_t> v = value(s);
        if (!v) {
            flush();
            continue;
        }
        const double x = span <= 0 ? chart_width - chart_pad
                                   : chart_pad + (chart_width - 2 * chart_pad) *
                                                     std::chrono::duration<double>(s.at - first).count() / span;
        const double y = chart_height - chart_pad - (chart_height - 2 * chart_pad) * static_cast<double>(*v) / max;
        points += (points.empty() ? "" : " ") + fixed(x) + "," + fixed(y);
    }
    flush();
    return out;
}

std::string history_chart(const status_history& history, wall_time now) {
    const auto& samples = history.samples();
    std::string svg = "<svg viewBox=\"0 0 " + std::to_string(chart_width) + " " + std::to_string(chart_height) +
                      "\" role=\"img\" aria-label=\"held and parked jobs over time\">";
    if (samples.empty()) return svg + "<text x=\"50%\" y=\"50%\" class=\"none\">no samples yet</text></svg>";
    double max = 1;
    for (const auto& s : samples)
        max = std::max({max, static_cast<double>(s.held), static_cast<double>(s.parked.value_or(0))});
    const int base = chart_height - chart_pad;
    svg += "<line class=\"axis\" x1=\"" + std::to_string(chart_pad) + "\" y1=\"" + std::to_string(base) +
           "\" x2=\"" + std::to_string(chart_width - chart_pad) + "\" y2=\"" + std::to_string(base) + "\"/>";
    svg += "<text x=\"2\" y=\"" + std::to_string(chart_pad - 8) + "\">" +
           std::to_string(static_cast<std::uint64_t>(max)) + "</text><text x=\"2\" y=\"" + std::to_string(base) + "\">0</text>";
    const wall_time end = std::max(now, samples.back().at);  // a sample from after now: the clock stepped back
    const auto minutes = std::chrono::duration<double>(end - samples.front().at).count() / 60;
    svg += "<text x=\"" + std::to_string(chart_pad) + "\" y=\"" + std::to_string(chart_height - 6) + "\">" +
           fixed(minutes) + " min ago</text><text x=\"" + std::to_string(chart_width - chart_pad) + "\" y=\"" +
           std::to_string(chart_height - 6) + "\" text-anchor=\"end\">now</text>";
    svg += lines(samples, end, [](const status_sample& s) { return std::optional<std::uint64_t>(s.held); }, max,
                 "held");
    svg += lines(samples, end, [](const status_sample& s) { return s.parked; }, max, "parked");
    return svg + "</svg>";
}

std::string lateness_bars(const duration_histogram& h) {
    const std::size_t n = h.bounds.size() + 1;
    std::vector<std::uint64_t> counts(n, 0);
    for (std::size_t i = 0; i < h.counts.size(); ++i) counts[std::min(i, n - 1)] += h.counts[i];
    const double max = static_cast<double>(std::max<std::uint64_t>(*std::max_element(counts.begin(), counts.end()), 1));
    const double width = static_cast<double>(chart_width - 2 * chart_pad) / static_cast<double>(n);
    std::string svg = "<svg viewBox=\"0 0 " + std::to_string(chart_width) + " " + std::to_string(chart_height) +
                      "\" role=\"img\" aria-label=\"start lateness histogram\">";
    for (std::size_t i = 0; i < n; ++i) {
        const std::string bound = i < h.bounds.size() ? "≤ " + short_seconds(h.bounds[i]) : "more";
        // Every other bound when they would crowd (each bar's title has its own).
        const std::string label = n > 12 && i % 2 == 1 && i + 1 < n ? ""
                                  : i < h.bounds.size()            ? short_seconds(h.bounds[i])
                                                                   : "+Inf";
        const double height = (chart_height - 2 * chart_pad) * static_cast<double>(counts[i]) / max;
        const double x = chart_pad + width * static_cast<double>(i);
        svg += "<g data-bucket=\"" + std::to_string(i) + "\" data-count=\"" + std::to_string(counts[i]) +
               "\"><title>" + bound + ": " + std::to_string(counts[i]) + " runs</title><rect x=\"" +
               fixed(x + 1) + "\" y=\"" + fixed(chart_height - chart_pad - height) + "\" width=\"" +
               fixed(width - 2) + "\" height=\"" + fixed(height) + "\"/><text x=\"" + fixed(x + width / 2) +
               "\" y=\"" + std::to_string(chart_height - 8) + "\" text-anchor=\"middle\">" + label + "</text></g>";
    }
    return svg + "</svg>";
}

std::string dead_letters_table(const std::vector<dead_letter_info>& letters, wall_time now) {
    if (letters.empty()) return "<p class=\"none\">No dead letters.</p>\n";
    std::string t = "<table><thead><tr><th>when</th><th>id</th><th>reason</th></tr></thead><tbody>\n";
    for (const auto& d : letters) {
        const auto ago = std::chrono::floor<std::chrono::seconds>(now - d.at).count();
        t += "<tr><td title=\"" + utc_time(d.at) + "\">" + std::to_string(std::max<std::int64_t>(ago, 0)) +
             " s ago</td><td><code>" + html(d.id) + "</code></td><td>" + html(d.reason) + "</td></tr>\n";
    }
    return t + "</tbody></table>\n";
}

constexpr std::string_view style = R"(<style>
:root{--bg:#f6f7f9;--fg:#1d2330;--muted:#6b7385;--card:#fff;--line:#e3e6ec;--held:#2f6fde;--parked:#e08a1e}
@media (prefers-color-scheme:dark){:root{--bg:#14171d;--fg:#e6e9ef;--muted:#939bab;--card:#1d2129;--line:#2c313c}}
*{box-sizing:border-box}body{margin:0;padding:24px;font:14px/1.45 system-ui,sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;align-items:baseline;gap:12px;flex-wrap:wrap}h1{margin:0;font-size:22px}h2{font-size:15px;margin:0 0 8px}
.muted,.none{color:var(--muted)}.state{padding:2px 10px;border-radius:99px;font-size:12px;color:#fff}
.up{background:#2e9d57}.down{background:#c8413b}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(104px,1fr));gap:12px;margin:20px 0}
.card,section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.card b{display:block;font-size:24px;font-variant-numeric:tabular-nums}.card span{color:var(--muted);white-space:nowrap}
section{margin-bottom:16px}svg{width:100%;height:auto}svg text{font-size:10px;fill:var(--muted)}
.axis{stroke:var(--line)}polyline{fill:none;stroke-width:2}.held{stroke:var(--held)}.parked{stroke:var(--parked)}
rect{fill:var(--held)}.key{display:inline-block;width:10px;height:10px;border-radius:2px;margin:0 4px 0 12px}
table{width:100%;border-collapse:collapse}td,th{text-align:left;padding:6px 8px;border-top:1px solid var(--line)}
code{word-break:break-all}
</style>)";

}  // namespace

std::string status_page_html(std::string_view queue, const consumer_metrics& m, std::span<const parked_count> parked,
                             const status_history& history, wall_time now) {
    const consumer_stats& c = m.counters;
    const std::uint64_t lateness_count =
        std::accumulate(m.start_lateness.counts.begin(), m.start_lateness.counts.end(), std::uint64_t{0});
    const std::string q = html(queue);
    std::string page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                       "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
                       "<title>tarry: " + q + "</title>\n" + std::string(style) + "</head><body>\n";
    page += "<header><h1>tarry <span class=\"muted\">" + q + "</span></h1><span class=\"state " +
            (m.connected ? "up\" data-connected=\"1\">consuming" : "down\" data-connected=\"0\">not consuming") +
            "</span><span class=\"muted\">" + utc_time(now) + "</span></header>\n<div class=\"cards\">\n";
    page += card("held", "held", c.held);
    page += card("parked", "parked", parked_total(parked));
    page += card("running", "running", c.running);
    page += card("received", "received", c.received);
    page += card("succeeded", "succeeded", c.succeeded);
    page += card("retried", "retried", c.retried);
    page += card("dead-lettered", "dead-lettered", c.dead_lettered);
    page += "</div>\n<section><h2>Held and parked<span class=\"key\" style=\"background:var(--held)\"></span>held"
            "<span class=\"key\" style=\"background:var(--parked)\"></span>parked</h2>" +
            history_chart(history, now) + "</section>\n";
    page += "<section data-lateness-count=\"" + std::to_string(lateness_count) + "\"><h2>Start lateness <span "
            "class=\"muted\">" + std::to_string(lateness_count) + " runs</span></h2>" +
            lateness_bars(m.start_lateness) + "</section>\n";
    page += "<section><h2>Recent dead letters</h2>\n" + dead_letters_table(m.recent_dead_letters, now) +
            "</section>\n<p class=\"muted\">/metrics · /jobs · /healthz · /readyz</p>\n</body></html>\n";
    return page;
}

}  // namespace tarry::http_detail
