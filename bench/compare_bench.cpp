// tarry against what users pick instead, in one run on one broker
// (bench/RESULTS.md, "Compared with the alternatives"; `make bench-compare`):
//
// - L: 2 000 jobs due uniformly over [2 s, 12 s], published in random order.
// - H: 500, then 10 000 far jobs due in 90 s, then 50 near jobs due 2 s
//   after the far ones were published; only the near ones count.
// - T: 20 000 jobs due now, published before consuming; jobs/s from the
//   first handler start to the last.
//
// Contenders (compare_contenders.hpp): the tarry consumer, a naive pika
// consumer sleeping until due in its callback, Celery 5.2 ETA tasks with
// its defaults and with the prefetch-multiplier workaround, the binary delay
// cascade alone (L, H); in T also tarry's raw consume-and-ack loop and
// rabbitmq-c consuming and acking as fast as it can (the C ceiling), in
// interleaved rounds. Lateness = handler start - due time for every
// contender; a job not started within the scenario's grace of its due time
// is reported as not run (censored). Markdown tables on stdout; lateness
// CDFs (compare-L.svg, compare-H.svg) and throughput bars (compare-T.svg)
// into --plots DIR.
//
//   compare_bench [--smoke] [--only LHT] [--rounds N] [--plots DIR]
//
// --smoke: a short run of everything (about two minutes) to check that it
// works; its figures mean nothing. Needs TARRY_TEST_AMQP_URL and
// TARRY_SOURCE_ROOT (make bench-compare sets both).
#include "compare_contenders.hpp"
#include "consumer_bench_support.hpp"
#include "svg_plot.hpp"
#include "throughput_rounds.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>

namespace {

using namespace cbench;

struct settings {
    bool smoke = false;
    std::string only = "LHT";
    std::size_t rounds = 5;
    std::size_t l_jobs = 2000;
    std::chrono::milliseconds l_from = 2s, l_to = 12s;
    double l_grace_s = 15;
    std::vector<std::size_t> h_far = {500, 10000};
    std::chrono::seconds h_far_due = 90s;
    double h_grace_s = 60;
    std::size_t t_jobs = throughput_jobs;
};

struct contender {
    std::string name;
    std::string color;
    std::function<contender_run(const context&, const plan&)> run;
    bool in_t = true;  ///< run on T's plan too (tarry and the cascade are not: see scenario_t)
};

std::vector<contender> lateness_contenders() {
    return {
        {"tarry consumer", "#d62728", run_tarry, false},
        {"naive: pika, sleep in callback", "#7f7f7f", run_naive},
        {"Celery ETA, defaults", "#1f77b4",
         [](const context& cx, const plan& p) { return run_celery(cx, p, "defaults"); }},
        {"Celery ETA, prefetch x1 + acks_late", "#17becf",
         [](const context& cx, const plan& p) { return run_celery(cx, p, "prefetch1"); }},
        {"binary delay cascade alone", "#2ca02c", run_cascade, false},
    };
}

struct outcome {
    std::string name, color;
    tally t;
    double publish_s = 0;
};

std::string svg_path(const context& cx, const char* name) { return cx.svg_dir + "/" + name; }

void save(const context& cx, const char* name, const auto& figure) {
    if (cx.svg_dir.empty()) return;
    if (svg::write(svg_path(cx, name), figure))
        std::printf("plot: %s\n", name);
    else
        std::printf("plot: cannot write %s\n", svg_path(cx, name).c_str());
}

std::string censored_text(const tally& t, double grace_s) {
    if (t.not_run == 0) return "0";
    char buf[64];
    std::snprintf(buf, sizeof buf, "**%zu** (not run within %.0f s)", t.not_run, grace_s);
    return buf;
}

void print_lateness_rows(const std::string& first_cell, const std::vector<outcome>& rows, double grace_s) {
    for (const auto& o : rows) {
        const auto s = summarize(o.t.late_ms);
        std::printf("| %s%s | %zu | %zu | ", first_cell.c_str(), o.name.c_str(), o.t.expected, s.n);
        if (s.n)
            std::printf("%.3f | %.3f | %.3f | %.3f | ", s.p50, s.p90, s.p99, s.max);
        else
            std::printf("- | - | - | - | ");
        std::printf("%s | %zu | %.3f |\n", censored_text(o.t, grace_s).c_str(), o.t.early, o.publish_s);
        if (o.t.duplicates) std::printf("| | note: %zu duplicate starts | | | | | | | | |\n", o.t.duplicates);
    }
}

std::vector<outcome> run_all(const context& cx, const plan& p) {
    std::vector<outcome> out;
    for (const auto& c : lateness_contenders()) {
        std::fprintf(stderr, "compare_bench: %s, %s\n", p.name.c_str(), c.name.c_str());
        const auto r = c.run(cx, p);
        out.push_back({c.name, c.color, tally_starts(r.starts, p.counted), r.publish_s});
    }
    return out;
}

svg::figure cdf_figure(const std::vector<outcome>& rows, std::string title, std::string note, double grace_s) {
    svg::figure f;
    f.title = std::move(title);
    f.note = std::move(note);
    f.x = {"lateness: handler start - due time (ms, log scale)", true, {}, {}};
    f.y = {"fraction of the jobs started", false, 0.0, 1.0};
    f.legend = svg::legend_corner::below;
    for (const auto& o : rows) {
        auto label = o.name;
        if (o.t.not_run)
            label += " (" + std::to_string(o.t.not_run) + " of " + std::to_string(o.t.expected) + " not run within " +
                     std::to_string(static_cast<int>(grace_s)) + " s)";
        f.data.push_back({label, o.color, svg::cdf(o.t.late_ms, 400, o.t.expected), true});
    }
    return f;
}

const char* lateness_header =
    "| contender | jobs | started in time | p50 | p90 | p99 | max | not run in time | early | publish (s) |\n"
    "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n";

void scenario_l(const context& cx, const settings& s) {
    const auto p = lateness_plan(s.l_jobs, s.l_from, s.l_to, s.l_grace_s);
    const auto rows = run_all(cx, p);
    std::printf("\n### L: lateness (ms)\n\n%zu jobs due uniformly over [%.0f s, %.0f s] after publishing began, "
                "published in random order; lateness = handler start - due time; a job not started within %.0f s of "
                "its due time counts as not run.\n\n%s",
                s.l_jobs, s.l_from.count() / 1000.0, s.l_to.count() / 1000.0, s.l_grace_s, lateness_header);
    print_lateness_rows("", rows, s.l_grace_s);
    save(cx, "compare-L.svg",
         cdf_figure(rows,
                    "L: lateness CDF, " + std::to_string(s.l_jobs) + " jobs due over " +
                        std::to_string((s.l_to - s.l_from).count() / 1000) + " s",
                    "fraction of all jobs started within x ms of their due time (the same jobs for every contender)",
                    s.l_grace_s));
}

void scenario_h(const context& cx, const settings& s) {
    std::vector<std::pair<std::size_t, std::vector<outcome>>> all;
    for (auto far : s.h_far) all.emplace_back(far, run_all(cx, head_of_line_plan(far, s.h_far_due, s.h_grace_s)));
    std::printf("\n### H: head-of-line (lateness of the 50 near jobs, ms)\n\nFar jobs due %llds after publishing "
                "began, then, once they were published, 50 near jobs due 2 s later; only the near jobs count; a near "
                "job not started within %.0f s of its due time counts as not run. publish: far and near jobs, "
                "confirms included.\n\n",
                static_cast<long long>(s.h_far_due.count()), s.h_grace_s);
    std::printf("| far jobs: contender | near jobs | started in time | p50 | p90 | p99 | max | not run in time | "
                "early | publish (s) |\n|---|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
    for (const auto& [far, rows] : all) print_lateness_rows(std::to_string(far) + ": ", rows, s.h_grace_s);
    const auto& [far, rows] = all.back();
    save(cx, "compare-H.svg",
         cdf_figure(rows, "H: lateness CDF of 50 near jobs behind " + std::to_string(far) + " far jobs",
                    "far jobs due in " + std::to_string(s.h_far_due.count()) +
                        " s, published first; near jobs due 2 s after",
                    s.h_grace_s));
}

struct rate_row {
    std::string name, color;
    std::vector<double> rounds;
};

void scenario_t(const context& cx, const settings& s) {
    endpoint admin(cx.config);
    const auto defaults = options_for(cx, "x");
    const std::uint16_t prefetch = defaults.effective_prefetch();
    rate_row tarry_row{"tarry consumer", "#d62728", {}}, raw{"raw consume + ack, tarry AMQP client", "#ff7f0e", {}},
        c{"rabbitmq-c consume + ack (C ceiling)", "#9467bd", {}};
    tarry::consumer_stats st;
    for (std::size_t r = 0; r < s.rounds; ++r) {
        std::fprintf(stderr, "compare_bench: T, round %zu of %zu\n", r + 1, s.rounds);
        tarry_row.rounds.push_back(tarry_round(cx, admin, st, events_mode::off, s.t_jobs));
        raw.rounds.push_back(raw_round(cx, admin, prefetch, s.t_jobs));
        c.rounds.push_back(rabbitmq_c_round(cx, admin, prefetch, s.t_jobs));
    }
    const auto p = throughput_plan(s.t_jobs);
    std::vector<rate_row> others;
    std::vector<std::size_t> missing;
    for (const auto& k : lateness_contenders()) {
        if (!k.in_t) continue;
        std::fprintf(stderr, "compare_bench: T, %s\n", k.name.c_str());
        const auto t = tally_starts(k.run(cx, p).starts, p.counted);
        others.push_back({k.name, k.color, {start_rate(t)}});
        missing.push_back(t.expected - t.started);
    }
    std::printf("\n### T: throughput (jobs/s)\n\n%zu jobs due now (no due time), published before consuming, "
                "no-op handler; first handler start (first delivery) to the last one (last ack for the raw loop and "
                "rabbitmq-c, last success for tarry). tarry, its raw loop and rabbitmq-c: %zu interleaved rounds, "
                "prefetch %u for the raw loop and rabbitmq-c (the consumer's window); the others one round each "
                "(naive: prefetch %u; Celery: its own). vs rabbitmq-c: the median of each round's ratio for the "
                "interleaved ones, the ratio of medians for the others. The delay cascade is not in T: a delay of "
                "0 publishes straight to the queue.\n\n",
                s.t_jobs, s.rounds, prefetch, naive_prefetch);
    std::printf("| contender | jobs/s (median) | rounds | vs rabbitmq-c |\n|---|---:|---|---:|\n");
    const double c_median = median(c.rounds);
    const auto per_round = [&](const rate_row& row) {
        std::vector<double> ratios;
        for (std::size_t r = 0; r < row.rounds.size(); ++r) ratios.push_back(row.rounds[r] / c.rounds[r]);
        return median(ratios);
    };
    const double tarry_c = per_round(tarry_row), raw_c = per_round(raw);
    std::printf("| %s | %.0f | %s | **%.2f** |\n", tarry_row.name.c_str(), median(tarry_row.rounds),
                rounds_text(tarry_row.rounds).c_str(), tarry_c);
    std::printf("| %s | %.0f | %s | **%.2f** |\n", raw.name.c_str(), median(raw.rounds), rounds_text(raw.rounds).c_str(),
                raw_c);
    std::printf("| %s | %.0f | %s | 1.00 |\n", c.name.c_str(), c_median, rounds_text(c.rounds).c_str());
    for (std::size_t k = 0; k < others.size(); ++k) {
        const auto& o = others[k];
        std::printf("| %s | %.0f | %s | %.2f |", o.name.c_str(), median(o.rounds), rounds_text(o.rounds).c_str(),
                    median(o.rounds) / c_median);
        if (missing[k]) std::printf(" (%zu of %zu not run in %lld s)", missing[k], s.t_jobs,
                                    static_cast<long long>(p.time_limit.count()));
        std::printf("\n");
    }
    std::printf("\ntargets: raw >= 1.0 x rabbitmq-c: %s (%.2f); tarry >= 0.9 x rabbitmq-c: %s (%.2f)\n",
                verdict(raw_c >= 1.0), raw_c, verdict(tarry_c >= 0.9), tarry_c);

    svg::bar_chart chart;
    chart.title = "T: throughput, " + std::to_string(s.t_jobs) + " jobs due now";
    chart.note = "median jobs/s; whiskers: slowest and fastest of the rounds";
    chart.value = {"jobs/s (first handler start to the last)", false, {}, {}};
    chart.unit = "jobs/s";
    for (const auto* row : {&tarry_row, &raw, &c}) {
        const auto [lo, hi] = std::minmax_element(row->rounds.begin(), row->rounds.end());
        chart.bars.push_back({row->name, median(row->rounds), row->color, std::pair{*lo, *hi}});
    }
    for (const auto& o : others) chart.bars.push_back({o.name, median(o.rounds), o.color, std::nullopt});
    save(cx, "compare-T.svg", chart);
}

std::string arg(int argc, char** argv, const char* name, std::string fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
    return fallback;
}

}  // namespace

int main(int argc, char** argv) try {
    context cx = context_from_env();
    const char* root = std::getenv("TARRY_SOURCE_ROOT");
    if (!root) die("TARRY_SOURCE_ROOT is not set (make bench-compare sets it)");
    cx.source_root = root;
    cx.svg_dir = arg(argc, argv, "--plots", cx.source_root + "/bench/plots");
    settings s;
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "--smoke") == 0) s.smoke = true;
    if (s.smoke) {
        s.rounds = 1;
        s.l_jobs = 200;
        s.l_from = 1s;
        s.l_to = 3s;
        s.l_grace_s = 5;
        s.h_far = {100};
        s.h_far_due = 20s;
        s.h_grace_s = 5;
        s.t_jobs = 2000;
        cx.svg_dir = arg(argc, argv, "--plots", "");  // a smoke run's plots are not worth keeping
    }
    s.only = arg(argc, argv, "--only", s.only);
    s.rounds = number_arg(argc, argv, "--rounds", s.rounds);
    std::string server;
    {
        endpoint e(cx.config);
        server = e.server;
    }
    const std::time_t now = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    std::printf("## compare_bench%s: %s, %s, %u cores\n", s.smoke ? " --smoke (figures not meaningful)" : "", date,
                server.c_str(), std::thread::hardware_concurrency());
    if (s.only.find('L') != std::string::npos) scenario_l(cx, s);
    if (s.only.find('H') != std::string::npos) scenario_h(cx, s);
    if (s.only.find('T') != std::string::npos) scenario_t(cx, s);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "compare_bench: %s\n", e.what());
    return 1;
}
