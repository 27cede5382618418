// soak_report: the soak's report (scripts/soak). Reads the worker's events,
// the publisher's log of confirmed jobs and the RSS samples, prints one row
// per interval and the verdicts, writes the table as CSV and the plot as SVG.
//
//   soak_report --events FILE --published FILE --rss FILE --start EPOCH_S
//               --interval-s N --rows N --max-attempts N --csv FILE --svg FILE
//               [--dead-letters N]
//
// --rss holds lines `EPOCH_S RSS_KB LOAD1` (the worker's VmRSS and the load
// average, sampled at start + k·interval). --dead-letters: the messages
// found in the dead-letter queue at the end, checked against the dead events.
// The verdicts (PASS/FAIL): RSS and p99 flat (soak_table.hpp), and every job
// ended as meant, none early (soak_ledger.hpp). Exit 0 when all pass, 1
// otherwise, 2 on bad arguments or unreadable files.
#include "command_args.hpp"
#include "soak_events.hpp"
#include "soak_ledger.hpp"
#include "soak_table.hpp"
#include "svg_plot.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const char* const usage =
    "usage: soak_report --events FILE --published FILE --rss FILE --start EPOCH_S --interval-s N --rows N\n"
    "                   --max-attempts N --csv FILE --svg FILE [--dead-letters N]\n";

const char* verdict(bool pass) { return pass ? "PASS" : "FAIL"; }

std::ifstream open_or_exit(const std::string& path) {
    std::ifstream in(path);
    if (!in) {
        std::fprintf(stderr, "soak_report: cannot read %s\n", path.c_str());
        std::exit(2);
    }
    return in;
}

std::string opt_text(const std::optional<long>& v) { return v ? std::to_string(*v) : "-"; }

std::string load_text(const std::optional<double>& v) {
    if (!v) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", *v);
    return buf;
}

void write_csv(const std::string& path, const std::vector<soak::interval_row>& rows, double interval_s) {
    std::ofstream out(path);
    out << "row,end_s,runs,lateness_p50_ms,lateness_p99_ms,lateness_max_ms,retries,parked,dead,rss_kb,load1\n";
    char buf[256];
    for (const auto& r : rows) {
        std::snprintf(buf, sizeof buf, "%zu,%.0f,%zu,%.3f,%.3f,%.3f,%zu,%zu,%zu,%s,%s\n", r.index,
                      static_cast<double>(r.index) * interval_s, r.runs, r.p50_ms, r.p99_ms, r.max_ms, r.retries,
                      r.parked, r.dead, opt_text(r.rss_kb).c_str(), load_text(r.load1).c_str());
        out << buf;
    }
}

/// RSS and p99 per interval, each as a ratio to its baseline, with the two
/// limits: the criteria at a glance. The note names the baselines (and the
/// rows whose p99 is beyond the plot).
void write_svg(const std::string& path, const std::vector<soak::interval_row>& rows, const soak::flatness& f,
               double interval_s) {
    svg::figure fig;
    fig.title = "Soak: worker RSS and lateness p99 per interval, relative to the first sixth";
    char note[200];
    std::snprintf(note, sizeof note, "baseline: RSS %s kB at row %zu, median p99 %.3f ms of rows 1-%zu",
                  opt_text(f.rss_baseline_kb).c_str(), f.baseline_rows, f.p99_baseline_ms, f.baseline_rows);
    fig.note = note;
    const double minutes = interval_s / 60.0;
    fig.x = {"minutes since publishing started", false, 0.0, static_cast<double>(rows.size()) * minutes};
    // Fixed to [0, 3], so both limits stay readable whatever one row does.
    constexpr double top = 3.0;
    fig.y = {"ratio to baseline", false, 0.0, top};
    svg::series rss{"RSS / RSS at end of baseline", "#1f77b4", {}, true};
    svg::series p99{"p99 / baseline median p99", "#d62728", {}, true};
    for (const auto& r : rows) {
        const double x = static_cast<double>(r.index) * minutes;
        if (r.rss_kb && f.rss_baseline_kb && *f.rss_baseline_kb > 0)
            rss.points.emplace_back(x, static_cast<double>(*r.rss_kb) / static_cast<double>(*f.rss_baseline_kb));
        if (r.runs > 0 && f.p99_baseline_ms > 0) p99.points.emplace_back(x, r.p99_ms / f.p99_baseline_ms);
    }
    std::string clipped;
    for (const auto& r : rows)
        if (r.runs > 0 && f.p99_baseline_ms > 0 && r.p99_ms / f.p99_baseline_ms > top)
            clipped += (clipped.empty() ? "" : ", ") + std::to_string(r.index);
    if (!clipped.empty()) fig.note += "; p99 above 3x drawn at the top: rows " + clipped;
    const double end = static_cast<double>(rows.size()) * minutes;
    svg::series rss_limit{"RSS limit (1.1)", "#9ecae1", {{0, soak::rss_growth_limit}, {end, soak::rss_growth_limit}}, true};
    svg::series p99_limit{"p99 limit (2)", "#fc9272", {{0, soak::p99_growth_limit}, {end, soak::p99_growth_limit}}, true};
    fig.data = {rss_limit, p99_limit, rss, p99};
    if (!svg::write(path, fig)) std::fprintf(stderr, "soak_report: cannot write %s\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, usage);
    const std::string events_path = args.required("--events");
    const std::string published_path = args.required("--published");
    const std::string rss_path = args.required("--rss");
    const auto start = soak::read_epoch(args.required("--start"));
    const std::size_t interval_s = args.number("--interval-s", 0);
    const std::size_t rows = args.number("--rows", 0);
    const auto max_attempts = static_cast<std::uint32_t>(args.number("--max-attempts", 0));
    const std::string csv_path = args.required("--csv");
    const std::string svg_path = args.required("--svg");
    const bool has_dead_letters = args.has("--dead-letters");
    const std::size_t dead_letters = args.number("--dead-letters", 0);
    args.finish();
    if (!start || interval_s == 0 || rows == 0 || max_attempts == 0)
        args.fail("--start needs epoch seconds; --interval-s, --rows and --max-attempts at least 1");

    soak::interval_table table(*start, static_cast<soak::micros>(interval_s) * 1'000'000, rows);
    soak::ledger book(max_attempts);
    std::string line;
    std::size_t unreadable = 0;
    {
        auto in = open_or_exit(published_path);
        while (std::getline(in, line))
            if (auto j = soak::read_published(line)) book.publish(*j);
            else ++unreadable;
    }
    std::size_t dead_events = 0;
    {
        auto in = open_or_exit(events_path);
        while (std::getline(in, line)) {
            const auto e = soak::read_event(line);
            if (!e) continue;
            table.add(*e);
            book.add(*e);
            if (e->event == "dead") ++dead_events;
        }
    }
    {
        auto in = open_or_exit(rss_path);
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string at;
            soak::rss_sample s;
            if (!(fields >> at >> s.rss_kb >> s.load1)) continue;
            if (auto t = soak::read_epoch(at)) {
                s.at = *t;
                table.add(s);
            }
        }
    }

    const auto table_rows = table.rows();
    std::printf("%4s %6s %7s %8s %8s %9s %7s %7s %5s %9s %5s\n", "row", "end_s", "runs", "p50_ms", "p99_ms",
                "max_ms", "retries", "parked", "dead", "rss_kb", "load");
    for (const auto& r : table_rows)
        std::printf("%4zu %6zu %7zu %8.3f %8.3f %9.3f %7zu %7zu %5zu %9s %5.2f\n", r.index, r.index * interval_s,
                    r.runs, r.p50_ms, r.p99_ms, r.max_ms, r.retries, r.parked, r.dead,
                    opt_text(r.rss_kb).c_str(), r.load1.value_or(0.0));

    const auto f = soak::judge(table_rows);
    std::printf("\nRSS flat: row %zu %s kB <= %.1f x row %zu %s kB: %s\n", table_rows.size(),
                opt_text(f.rss_last_kb).c_str(), soak::rss_growth_limit, f.baseline_rows,
                opt_text(f.rss_baseline_kb).c_str(), verdict(f.rss_flat));
    std::string over;
    for (auto k : f.rows_over) over += " " + std::to_string(k);
    std::printf("p99 flat: every row's p99 <= %.0f x %.3f ms (median p99 of rows 1-%zu) = %.3f ms: %s%s%s\n",
                soak::p99_growth_limit, f.p99_baseline_ms, f.baseline_rows, f.p99_limit_ms, verdict(f.p99_flat),
                over.empty() ? "" : "; rows over it or without runs:", over.c_str());

    const auto r = book.result();
    const bool dead_letters_match = !has_dead_letters || dead_letters == dead_events;
    const bool jobs_ok = r.clean() && unreadable == 0 && dead_letters_match;
    std::printf("jobs: %zu published, %zu succeeded, %zu dead-lettered as meant, %zu lost, %zu ended otherwise "
                "than meant, %zu runs (%zu more than meant), %zu early, %zu due changed, %zu events of unknown "
                "jobs, %zu unreadable log lines",
                r.published, r.succeeded, r.dead_as_meant, r.lost, r.wrong_end, r.runs, r.extra_runs, r.early,
                r.due_changed, r.unknown, unreadable);
    if (has_dead_letters) std::printf(", %zu dead letters in the queue for %zu dead events", dead_letters, dead_events);
    std::printf(": %s\n", verdict(jobs_ok));

    write_csv(csv_path, table_rows, static_cast<double>(interval_s));
    write_svg(svg_path, table_rows, f, static_cast<double>(interval_s));
    return f.rss_flat && f.p99_flat && jobs_ok ? 0 : 1;
}
