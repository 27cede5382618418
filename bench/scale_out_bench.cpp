// Scale-out on a three-node cluster: samples/echo_worker as 1, 2 and 4
// processes on one quorum work queue of a private cluster (scripts/cluster,
// started here and stopped at the end, on a failure or a signal too), beside
// a raw consume-and-ack loop (raw_consume_loop.hpp) on the same cluster and
// queue type in the same run. See bench/RESULTS.md, "Scale-out on a
// three-node cluster".
//   T  jobs due now (no schedule header), published and confirmed before the
//      workers start; jobs/s from the first run to the last success, all
//      workers together; each job must run exactly once. The raw loop
//      consumes the same messages with 1 and with N consumers.
//   L  jobs due evenly over 10 s, published in random order once the
//      workers are ready and before the first is due; lateness of each run
//      (the worker's `at` - `due`); none may be early.
// Worker i and raw consumer i connect to node (i mod 3) + 1 first. Each
// round measures raw(1), T(1), T(2), raw(2), T(4), raw(4), then L(1), L(2),
// L(4); the figures are medians over the rounds (ratios: of each round's).
//
//   scale_out_bench [--smoke] [--rounds N] [--jobs N] [--late-jobs N]
//
// --smoke: one round, 2 000 T jobs, 200 L jobs over 2 s (suite 'cluster').
// Exit 1 when a check failed (a job lost, run twice or early, a worker not
// exiting 0 on SIGTERM) or the run could not finish. Reads TARRY_SOURCE_ROOT
// (for scripts/cluster) and TARRY_BUILD_ROOT (for samples/echo_worker).
#include "cleanup_on_signal.hpp"
#include "consumer_bench_support.hpp"
#include "echo_worker_fleet.hpp"
#include "private_cluster.hpp"
#include "raw_consume_loop.hpp"

#include "tarry/amqp/url.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>

namespace {

using namespace cbench;

constexpr std::size_t fleet_sizes[] = {1, 2, 4};

struct settings {
    int rounds = 5;
    std::size_t t_jobs = 20000;
    std::size_t l_jobs = 2000;
    std::chrono::milliseconds l_span = 10s;  ///< the L jobs fall due over this
    std::chrono::milliseconds l_lead = 3s;   ///< the first L job is due this long after publishing starts
};

/// Checks that failed; the run goes on and exits 1 at the end.
struct checks {
    std::vector<std::string> failed;
    void expect(bool ok, const std::string& what) {
        if (ok) return;
        failed.push_back(what);
        std::fprintf(stderr, "CHECK FAILED: %s\n", what.c_str());
    }
};

/// What every measurement needs: the cluster's nodes, an admin connection
/// (node 1), the worker program.
struct bench_env {
    std::vector<std::string> urls;
    std::vector<amqp::connection_config> configs;  ///< one per node
    std::string worker;
    endpoint* admin = nullptr;
    settings s;
    checks ck;
};

tarry::subscription_options quorum_options(const std::string& queue) {
    tarry::subscription_options o;
    o.queue = queue;
    o.queue_type = tarry::queue_kind::quorum;
    return o;
}

std::vector<amqp::connection_config> spread(const bench_env& e, std::size_t n) {
    std::vector<amqp::connection_config> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(e.configs[i % e.configs.size()]);
    return out;
}

/// A fresh quorum work queue holding `n` jobs due now ("T0".."T<n-1>").
std::string loaded_queue(bench_env& e, const char* what, std::size_t n) {
    const auto q = fresh_queue_name(what);
    declare_work_queue(*e.admin, q, tarry::queue_kind::quorum);
    confirmed_publisher pub(*e.admin);
    for (std::size_t i = 0; i < n; ++i) pub.publish(q, job_message("T" + std::to_string(i), std::nullopt));
    pub.wait_all();
    return q;
}

/// Index of an id "<prefix><number>" below n, or n.
std::size_t index_of(const std::string& id, char prefix, std::size_t n) {
    if (id.size() < 2 || id[0] != prefix) return n;
    std::size_t i = 0;
    for (std::size_t k = 1; k < id.size(); ++k) {
        if (id[k] < '0' || id[k] > '9') return n;
        i = i * 10 + static_cast<std::size_t>(id[k] - '0');
        if (i >= n) return n;
    }
    return i;
}

/// Each of the n jobs ran exactly once and nothing else ran; `what` names
/// the measurement in a failed check.
void expect_each_ran_once(bench_env& e, const std::vector<worker_event>& ev, char prefix, std::size_t n,
                          const std::string& what) {
    std::vector<std::size_t> runs(n, 0);
    std::size_t other = 0, succeeded = 0;
    for (const auto& x : ev) {
        if (x.what == "succeeded") ++succeeded;
        if (x.what != "run") continue;
        const auto i = index_of(x.id, prefix, n);
        if (i < n) ++runs[i]; else ++other;
    }
    const auto never = static_cast<std::size_t>(std::count(runs.begin(), runs.end(), 0));
    const auto twice = static_cast<std::size_t>(std::count_if(runs.begin(), runs.end(), [](auto r) { return r > 1; }));
    e.ck.expect(never == 0 && twice == 0 && other == 0 && succeeded == n,
                what + ": each job ran exactly once (not run " + std::to_string(never) + ", run twice or more " +
                    std::to_string(twice) + ", other runs " + std::to_string(other) + ", succeeded " +
                    std::to_string(succeeded) + " of " + std::to_string(n) + ")");
}

[[noreturn]] void not_ready(echo_worker_fleet& fleet, const std::string& what) {
    fleet.stop(10s);
    die(what + ": the workers were not ready in 60 s\n" + fleet.stderr_text());
}

struct throughput {
    double jobs_per_s = 0;
    std::vector<std::size_t> per_worker;  ///< runs each worker made
    double last_start_ms = 0;             ///< the last worker's first run, after the first worker's
};

/// T with `n_workers` echo_worker processes.
throughput tarry_throughput(bench_env& e, std::size_t n_workers) {
    const std::size_t n = e.s.t_jobs;
    const auto what = "T(" + std::to_string(n_workers) + ")";
    const auto q = loaded_queue(e, "scale-out-T", n);
    throughput t;
    {
        echo_worker_fleet fleet(e.worker, e.urls, q, n_workers, {"--queue-type", "quorum"});
        if (!fleet.wait_ready(60s)) not_ready(fleet, what);
        const bool all = fleet.wait_succeeded(n, 300s);
        const bool exited = fleet.stop(60s);
        e.ck.expect(exited, what + ": every worker exits 0 on SIGTERM\n" + fleet.stderr_text());
        if (!all) die(what + ": the jobs did not all succeed in 300 s\n" + fleet.stderr_text());
        const auto ev = fleet.events();
        expect_each_ran_once(e, ev, 'T', n, what);
        constexpr auto never = std::numeric_limits<std::int64_t>::max();
        std::vector<std::int64_t> first_of(n_workers, never);
        std::int64_t last = 0;
        t.per_worker.assign(n_workers, 0);
        for (const auto& x : ev) {
            if (x.what == "run") {
                first_of[x.worker] = std::min(first_of[x.worker], x.at_us);
                ++t.per_worker[x.worker];
            }
            if (x.what == "succeeded") last = std::max(last, x.at_us);
        }
        const auto first = *std::min_element(first_of.begin(), first_of.end());
        std::int64_t last_start = first;
        for (auto f : first_of)
            if (f != never) last_start = std::max(last_start, f);
        t.last_start_ms = static_cast<double>(last_start - first) / 1000.0;
        t.jobs_per_s = static_cast<double>(n) / (static_cast<double>(last - first) / 1e6);
    }
    delete_queues(*e.admin, quorum_options(q));
    return t;
}

/// The raw loop with `n_consumers` connections on the same load.
double raw_throughput(bench_env& e, std::size_t n_consumers) {
    const std::size_t n = e.s.t_jobs;
    const auto q = loaded_queue(e, "scale-out-raw", n);
    const double rate = raw_consume_rate(spread(e, n_consumers), q, n, quorum_options(q).effective_prefetch(), 300s);
    delete_queues(*e.admin, quorum_options(q));
    return rate;
}

/// L with `n_workers` processes: the lateness of each run, in ms.
summary lateness(bench_env& e, std::size_t n_workers) {
    const std::size_t n = e.s.l_jobs;
    const auto what = "L(" + std::to_string(n_workers) + ")";
    const auto q = fresh_queue_name("scale-out-L");
    declare_work_queue(*e.admin, q, tarry::queue_kind::quorum);
    std::vector<std::int64_t> due_us(n);
    std::vector<double> late;
    {
        echo_worker_fleet fleet(e.worker, e.urls, q, n_workers, {"--queue-type", "quorum"});
        if (!fleet.wait_ready(60s)) not_ready(fleet, what);
        const auto t0 = to_micros(sys::now());
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), std::mt19937_64(20261126));
        {
            confirmed_publisher pub(*e.admin);
            for (auto i : order) {
                const auto due = to_micros(t0 + e.s.l_lead + e.s.l_span * static_cast<long>(i) / static_cast<long>(n));
                due_us[i] = std::chrono::duration_cast<std::chrono::microseconds>(due.time_since_epoch()).count();
                pub.publish(q, job_message("L" + std::to_string(i), due));
            }
            pub.wait_all();
        }
        e.ck.expect(sys::now() < t0 + e.s.l_lead, what + ": every job was published before the first was due");
        const bool all = fleet.wait_succeeded(n, e.s.l_lead + e.s.l_span + 60s);
        const bool exited = fleet.stop(60s);
        e.ck.expect(exited, what + ": every worker exits 0 on SIGTERM\n" + fleet.stderr_text());
        if (!all) die(what + ": the jobs did not all succeed in time\n" + fleet.stderr_text());
        const auto ev = fleet.events();
        expect_each_ran_once(e, ev, 'L', n, what);
        std::size_t early = 0, due_moved = 0;
        for (const auto& x : ev) {
            const auto i = index_of(x.id, 'L', n);
            if (x.what != "run" || i >= n) continue;
            if (x.at_us < x.due_us) ++early;
            if (std::abs(x.due_us - due_us[i]) > 1) ++due_moved;  // the printed due: ±1 µs of rounding
            late.push_back(static_cast<double>(x.at_us - x.due_us) / 1000.0);
        }
        e.ck.expect(early == 0, what + ": no job starts early (" + std::to_string(early) + " did)");
        e.ck.expect(due_moved == 0, what + ": each run's due is the one published (" + std::to_string(due_moved) +
                                        " differ)");
    }
    delete_queues(*e.admin, quorum_options(q));
    return summarize(late);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::string joined(const std::vector<double>& v, const char* format) {
    std::string s;
    char buf[64];
    for (double x : v) {
        std::snprintf(buf, sizeof buf, format, x);
        s += (s.empty() ? "" : " · ") + std::string(buf);
    }
    return s;
}

/// Every round's figures.
struct results {
    std::vector<double> raw1;
    std::map<std::size_t, std::vector<double>> tarry, raw, l_p50, l_p99, l_max;
    std::map<std::size_t, std::vector<double>> last_start_ms;
    std::map<std::size_t, std::vector<std::size_t>> per_worker;  ///< the last round's
};

void one_round(bench_env& e, results& r) {
    r.raw1.push_back(raw_throughput(e, 1));
    for (auto n : fleet_sizes) {
        const auto t = tarry_throughput(e, n);
        r.tarry[n].push_back(t.jobs_per_s);
        r.per_worker[n] = t.per_worker;
        r.last_start_ms[n].push_back(t.last_start_ms);
        r.raw[n].push_back(n == 1 ? r.raw1.back() : raw_throughput(e, n));
    }
    for (auto n : fleet_sizes) {
        const auto l = lateness(e, n);
        r.l_p50[n].push_back(l.p50);
        r.l_p99[n].push_back(l.p99);
        r.l_max[n].push_back(l.max);
    }
}

/// The median over rounds of a / b, round by round.
double median_ratio(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> q;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) q.push_back(a[i] / b[i]);
    return median(q);
}

void report(const bench_env& e, const results& r) {
    std::printf("\n### T: %zu jobs due now, published before the workers start\n\n", e.s.t_jobs);
    std::printf("| processes N | tarry T(N) jobs/s | T(N) / T(1) | T(N) / raw(1) | raw(N) jobs/s | T(N) / raw(N) | "
                "runs per process (last round) | last process's first run (ms after the first's) |\n"
                "|---:|---:|---:|---:|---:|---:|---|---|\n");
    for (auto n : fleet_sizes) {
        std::string share;
        for (auto k : r.per_worker.at(n)) share += (share.empty() ? "" : " / ") + std::to_string(k);
        std::printf("| %zu | %.0f | %.2f | **%.2f** | %.0f | %.2f | %s | %s |\n", n, median(r.tarry.at(n)),
                    median_ratio(r.tarry.at(n), r.tarry.at(1)), median_ratio(r.tarry.at(n), r.raw1),
                    median(r.raw.at(n)), median_ratio(r.tarry.at(n), r.raw.at(n)), share.c_str(),
                    n == 1 ? "" : joined(r.last_start_ms.at(n), "%.0f").c_str());
    }
    std::printf("\nPer round (jobs/s): raw(1) %s", joined(r.raw1, "%.0f").c_str());
    for (auto n : fleet_sizes) {
        std::printf("; T(%zu) %s", n, joined(r.tarry.at(n), "%.0f").c_str());
        if (n > 1) std::printf("; raw(%zu) %s", n, joined(r.raw.at(n), "%.0f").c_str());
    }
    std::printf("\n\n### L: %zu jobs due evenly over %.0f s, published before the first is due\n\n", e.s.l_jobs,
                std::chrono::duration<double>(e.s.l_span).count());
    std::printf("| processes N | lateness p50 / p99 / max (ms) | p99 per round (ms) |\n|---:|---|---|\n");
    for (auto n : fleet_sizes)
        std::printf("| %zu | %.3f / **%.3f** / %.3f | %s |\n", n, median(r.l_p50.at(n)), median(r.l_p99.at(n)),
                    median(r.l_max.at(n)), joined(r.l_p99.at(n), "%.3f").c_str());
}

int run(int argc, char** argv) {
    settings s;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto number = [&] {
            if (i + 1 >= argc) die("missing a number after " + a);
            return std::strtoul(argv[++i], nullptr, 10);
        };
        if (a == "--smoke") {
            s.rounds = 1;
            s.t_jobs = 2000;
            s.l_jobs = 200;
            s.l_span = 2s;
        } else if (a == "--rounds") {
            s.rounds = static_cast<int>(number());
        } else if (a == "--jobs") {
            s.t_jobs = number();
        } else if (a == "--late-jobs") {
            s.l_jobs = number();
        } else {
            die("usage: scale_out_bench [--smoke] [--rounds N] [--jobs N] [--late-jobs N]");
        }
    }
    if (s.rounds < 1 || s.t_jobs == 0 || s.l_jobs == 0) die("rounds and job counts must be at least 1");
    const auto t0 = steady::now();
    bench_env e;
    e.s = s;
    e.worker = tarry_test::env("TARRY_BUILD_ROOT").value_or(".") + "/samples/echo_worker";

    std::optional<tarry_test::private_cluster> cluster;
    struct forget_on_exit {
        std::optional<std::size_t> key;
        ~forget_on_exit() {
            if (key) on_signal::forget(*key);
        }
    } stop_on_signal;  // goes before the cluster does
    {
        on_signal::deferred hold;  // a signal now waits until the cluster can be stopped
        cluster.emplace();
        stop_on_signal.key = on_signal::add([dir = cluster->dir()] {
            tarry_test::run_process({tarry_test::source_root() + "/scripts/cluster", "stop", dir}, 120s);
            tarry_test::run_process({"/bin/rm", "-rf", dir}, 60s);
        });
    }
    for (int n = 1; n <= 3; ++n) {
        e.urls.push_back(cluster->url(n));
        auto parsed = amqp::parse_url(cluster->url(n));
        if (parsed.error) die(parsed.detail);
        e.configs.push_back(parsed.config);
    }
    endpoint admin(e.configs[0]);
    e.admin = &admin;
    const auto probe = fresh_queue_name("scale-out-probe");
    declare_work_queue(admin, probe, tarry::queue_kind::quorum);
    const int leader = cluster->leader(probe);
    delete_queues(admin, quorum_options(probe));

    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
    std::printf("## Scale-out on a three-node cluster (scale_out_bench)\n\n%s; %u hardware threads, shared by the "
                "three nodes, the workers and this program; broker %s; the cluster booted in %.0f s\n",
                date, std::thread::hardware_concurrency(), admin.server.c_str(), seconds_since(t0));
    std::printf("quorum work queues declared through node 1 (a probe queue's leader: node %d); worker and raw "
                "consumer i connect to node (i mod 3) + 1 first; echo_worker defaults (4 handler threads, prefetch "
                "%u); %d round(s)\n", leader, quorum_options(probe).effective_prefetch(), s.rounds);
    std::fflush(stdout);

    results r;
    for (int round = 0; round < s.rounds; ++round) {
        const auto ts = steady::now();
        one_round(e, r);
        std::printf("(round %d took %.0f s)\n", round + 1, seconds_since(ts));
        std::fflush(stdout);
    }
    report(e, r);
    std::printf("\nchecks (each job run exactly once, none early, workers exit 0): %s\n",
                e.ck.failed.empty() ? "all passed" : "FAILED");
    for (const auto& f : e.ck.failed) std::printf("- %s\n", f.c_str());
    std::printf("scale_out_bench: done in %.0f s\n", seconds_since(t0));
    return e.ck.failed.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    cbench::on_signal::install();
    try {
        return run(argc, argv);
    } catch (const std::exception& f) {
        std::fprintf(stderr, "scale_out_bench: %s\n", f.what());
        return 1;
    }
}
