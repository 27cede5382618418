// nemesis_run: a nemesis run (issue "Partitions and a nemesis";
// docs/reliability.md, "The nemesis run"), judged by nemesis_check.
//
//   nemesis_run [--minutes N | --seconds N] [--out DIR] [--seed N] [--rate JOBS_PER_S]
//
// Starts a three-node cluster with each node in a network namespace of its
// own (scripts/cluster start --netns; the version from TARRY_TEST_RABBITMQ,
// 3.10 when unset; needs root: exit 77 without it), declares a quorum work
// queue, starts 4 echo_workers (2 with --async), attached through nodes 1,
// 2, 3 and 1, each with the other nodes as failover URLs and heartbeat=5,
// under libfaketime when it is installed (their clocks can then be
// stepped), and runs for N minutes (--minutes, else NEMESIS_MINUTES, else
// 30; --seconds for short runs): a steady load (nemesis_load.hpp: due up to
// min(10 min, run / 3) ahead and never after the run's end), and the
// nemesis (nemesis_faults.hpp: a random fault every 10 to 30 s, seeded:
// --seed, else a random seed, printed). Then it stops the load and the
// faults, waits until every job it published has ended (or 2 minutes past
// the latest due time) and 15 s more, stops the workers with SIGTERM and
// the cluster, and runs nemesis_check on the run directory (--out, default
// a fresh /tmp/tarry-nemesis.XXXXXX, kept): ledger, faults, worker-N.jsonl
// (worker-N.err: each worker's stderr, stamped). Prints the faults by kind,
// the lateness by fault kind, the checker's verdicts, and exits with the
// checker's exit code (0: every verdict has 0 unexplained).
#include "consumer_topology.hpp"
#include "io_thread.hpp"
#include "nemesis_faults.hpp"
#include "nemesis_fleet.hpp"
#include "nemesis_input.hpp"
#include "nemesis_lateness.hpp"
#include "nemesis_load.hpp"
#include "private_cluster.hpp"

#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/url.hpp"

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <charconv>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include <glob.h>
#include <unistd.h>

namespace {

namespace amqp = tarry::amqp;
using namespace std::chrono_literals;
using sys = std::chrono::system_clock;
using steady = std::chrono::steady_clock;

const char* const usage = "usage: nemesis_run [--minutes N | --seconds N] [--out DIR] [--seed N] [--rate JOBS_PER_S]\n";
constexpr unsigned worker_count = 4;
constexpr std::uint32_t max_attempts = 4;

[[noreturn]] void fail(const std::string& why) {
    std::fprintf(stderr, "nemesis_run: %s\n%s", why.c_str(), usage);
    std::exit(2);
}

std::uint64_t number(const std::string& name, std::string_view v) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || end != v.data() + v.size()) fail(name + " needs a whole number");
    return n;
}

// ---- printing, stamped with the time since the run began ----------------

std::mutex print_mutex;
const steady::time_point began = steady::now();

void say(const std::string& line) {
    std::lock_guard lock(print_mutex);
    std::printf("[%7.1f s] %s\n", std::chrono::duration<double>(steady::now() - began).count(), line.c_str());
    std::fflush(stdout);
}

// ---- SIGINT / SIGTERM: the run ends early, the cluster is still stopped --

std::mutex stop_mutex;
std::condition_variable stop_cv;
bool interrupted = false;

/// Sleeps until `until` or an interrupt; whether interrupted.
bool sleep_until(steady::time_point until) {
    std::unique_lock lock(stop_mutex);
    return stop_cv.wait_until(lock, until, [] { return interrupted; });
}

void watch_signals(sigset_t set) {
    std::thread([set] {
        int sig = 0;
        sigwait(&set, &sig);
        say(std::string("nemesis_run: ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + ", ending the run early");
        std::lock_guard lock(stop_mutex);
        interrupted = true;
        stop_cv.notify_all();
    }).detach();
}

// ---- the pieces -----------------------------------------------------------

std::string executable_dir() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string(".") : self.parent_path().string();
}

/// Debian's libfaketime (package faketime), if installed.
std::string faketime_library() {
    glob_t g{};
    std::string found;
    if (glob("/usr/lib/*/faketime/libfaketimeMT.so.1", 0, nullptr, &g) == 0 && g.gl_pathc > 0) found = g.gl_pathv[0];
    globfree(&g);
    return found;
}

tarry::subscription_options work_queue(const std::string& queue) {
    tarry::subscription_options o;
    o.queue = queue;
    o.queue_type = tarry::queue_kind::quorum;
    o.hold_horizon = 30s;  // as the workers' --hold-horizon-ms: jobs due later are parked
    return o;
}

/// The work queue, its dead-letter queue and wait queues, declared through node 1.
void declare_topology(const std::string& url, const tarry::subscription_options& o) {
    auto parsed = amqp::parse_url(url);
    if (parsed.error) throw std::runtime_error("bad URL " + url + ": " + parsed.detail);
    tarry_test::io_thread io;
    amqp::connection conn(io.executor(), parsed.config);
    if (auto ec = conn.async_connect(boost::asio::use_future).get())
        throw std::runtime_error("cannot connect to " + url + ": " + ec.message());
    auto [ec, ch] = conn.async_open_channel(boost::asio::use_future).get();
    if (ec) throw std::runtime_error("cannot open a channel: " + ec.message());
    for (auto& q : tarry::detail::consumer_topology(o)) {
        const auto name = q.name;
        auto [declared, info] = ch.async_declare_queue(std::move(q), boost::asio::use_future).get();
        if (declared) throw std::runtime_error("cannot declare " + name + ": " + declared.message());
    }
    conn.async_close(boost::asio::use_future).wait_for(10s);
}

/// Node n's URL with the options every client of the run uses.
std::string with_options(const std::string& url, const std::string& name) {
    return url + "?heartbeat=5&connection_name=" + name;
}

std::vector<std::string> worker_argv(tarry_test::private_cluster& cluster, unsigned n, const std::string& queue,
                                     const std::string& echo_worker, const std::string& faketime,
                                     const std::string& clock_file) {
    std::vector<std::string> a;
    if (!faketime.empty())
        a = {"/usr/bin/env", "LD_PRELOAD=" + faketime, "FAKETIME_DONT_FAKE_MONOTONIC=1",
             "FAKETIME_TIMESTAMP_FILE=" + clock_file, "FAKETIME_NO_CACHE=1"};
    a.push_back(echo_worker);
    // Attached through nodes 1, 2, 3, 1; the other nodes to fail over to.
    const int first = static_cast<int>((n - 1) % 3) + 1;
    for (int k = 0; k < 3; ++k) {
        a.push_back("--url");
        a.push_back(with_options(cluster.url((first - 1 + k) % 3 + 1), "nemesis-worker-" + std::to_string(n)));
    }
    for (const char* arg : {"--queue-type", "quorum", "--no-declare", "--workers", "8", "--hold-horizon-ms", "30000"})
        a.emplace_back(arg);
    a.insert(a.end(), {"--queue", queue, "--max-attempts", std::to_string(max_attempts)});
    if (n % 2 == 0) a.emplace_back("--async");  // workers 2 and 4
    return a;
}

std::string lateness_summary(const std::string& dir, unsigned workers) {
    std::ifstream faults_in(dir + "/faults");
    const auto faults = nemesis::read_faults(faults_in, dir + "/faults");
    std::vector<nemesis::worker_stream> streams;
    for (unsigned n = 1; n <= workers; ++n) {
        const auto path = dir + "/worker-" + std::to_string(n) + ".jsonl";
        std::ifstream in(path);
        streams.push_back(nemesis::read_worker_stream(in, path, n));
    }
    return nemesis::lateness_text(nemesis::lateness_by_fault(faults, streams));
}

}  // namespace

int main(int argc, char** argv) {
    std::chrono::seconds length = 30min;
    if (const auto m = tarry_test::env("NEMESIS_MINUTES")) length = std::chrono::minutes(number("NEMESIS_MINUTES", *m));
    std::string out;
    std::optional<std::uint64_t> seed;
    double rate = 20;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage, stdout);
            return 0;
        }
        if (i + 1 >= argc) fail("unknown option or missing value: " + arg);
        const std::string value = argv[++i];
        if (arg == "--minutes") length = std::chrono::minutes(number(arg, value));
        else if (arg == "--seconds") length = std::chrono::seconds(number(arg, value));
        else if (arg == "--out") out = value;
        else if (arg == "--seed") seed = number(arg, value);
        else if (arg == "--rate") rate = static_cast<double>(number(arg, value));
        else fail("unknown option " + arg);
    }
    if (length < 30s) fail("a run lasts at least 30 s");
    if (geteuid() != 0) {
        std::puts("nemesis_run: skipped: the cluster's network namespaces need root");
        return 77;
    }
    if (!seed) seed = std::random_device{}() ^ (static_cast<std::uint64_t>(std::random_device{}()) << 32);

    // Signals are taken by a thread of their own: blocked before any thread starts.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    watch_signals(signals);

    if (out.empty()) {
        char tmpl[] = "/tmp/tarry-nemesis.XXXXXX";
        if (!mkdtemp(tmpl)) fail("cannot make a run directory");
        out = tmpl;
    }
    std::filesystem::create_directories(out);
    out = std::filesystem::absolute(out).string();
    // A run directory used before: this run's files start empty.
    for (const auto& name : {"ledger", "faults"}) std::filesystem::remove(out + "/" + name);
    for (unsigned n = 1; n <= worker_count; ++n)
        for (const auto& ext : {".jsonl", ".err"}) std::filesystem::remove(out + "/worker-" + std::to_string(n) + ext);

    const std::string bin = executable_dir();
    const std::string build_root = tarry_test::env("TARRY_BUILD_ROOT").value_or(bin + "/../..");
    const std::string echo_worker = build_root + "/samples/echo_worker";
    const std::string checker = bin + "/nemesis_check";
    const std::string faketime = faketime_library();
    const auto horizon = std::min<std::chrono::milliseconds>(10min, std::chrono::duration_cast<std::chrono::milliseconds>(length) / 3);
    char intro[400];
    std::snprintf(intro, sizeof intro,
                  "nemesis_run: seed %llu, %lld s of load at %.0f jobs/s due up to %lld s ahead, RabbitMQ %s, run "
                  "directory %s",
                  static_cast<unsigned long long>(*seed), static_cast<long long>(length.count()), rate,
                  static_cast<long long>(horizon.count() / 1000),
                  tarry_test::env("TARRY_TEST_RABBITMQ").value_or("3.10").c_str(), out.c_str());
    say(intro);
    say(faketime.empty() ? "nemesis_run: libfaketime is not installed (Debian package faketime): no clock steps"
                         : "nemesis_run: workers run under " + faketime + ": clock steps on");

    int code = 2;
    std::map<std::string, unsigned> fault_counts;
    unsigned fault_failures = 0;
    try {
        say("nemesis_run: starting the cluster (scripts/cluster start --netns)");
        tarry_test::cluster_options co;
        co.netns = true;
        auto cluster = std::make_unique<tarry_test::private_cluster>(co);
        for (int n = 1; n <= 3; ++n) say("nemesis_run: node " + std::to_string(n) + " " + cluster->url(n));
        const std::string queue = "nemesis";
        declare_topology(cluster->url(1), work_queue(queue));
        say("nemesis_run: quorum queue '" + queue + "' led by node " + std::to_string(cluster->leader(queue)));

        std::vector<std::vector<std::string>> argvs;
        std::vector<std::string> clock_files;
        for (unsigned n = 1; n <= worker_count; ++n) {
            const std::string clock = out + "/clock-" + std::to_string(n);
            std::ofstream(clock, std::ios::trunc) << "+0\n";
            if (!faketime.empty()) clock_files.push_back(clock);
            argvs.push_back(worker_argv(*cluster, n, queue, echo_worker, faketime, clock));
        }
        nemesis::worker_fleet fleet(std::move(argvs), out);
        fleet.start();
        if (!fleet.wait_consuming(120s)) throw std::runtime_error("not every worker consumed within 120 s (see worker-N.err)");
        say("nemesis_run: 4 workers consuming");

        const auto load_end = sys::now() + length;
        const auto load_end_steady = steady::now() + length;
        nemesis::load_options lo;
        for (int k = 0; k < 3; ++k) lo.urls.push_back(with_options(cluster->url(k + 1), "nemesis-publisher"));
        lo.queue = queue;
        lo.rate = rate;
        lo.horizon = horizon;
        lo.end = load_end;
        lo.max_attempts = max_attempts;
        lo.seed = *seed;
        nemesis::load load(lo, out + "/ledger");
        load.start();
        say("nemesis_run: load started, schedules upserted");

        nemesis::nemesis_options no;
        no.seed = *seed + 1;
        no.clock_files = clock_files;
        no.say = say;
        nemesis::fault_injector nemesis(*cluster, fleet, no, out + "/faults");
        nemesis.start();

        for (;;) {
            const auto next = std::min(load_end_steady, steady::now() + 30s);
            if (sleep_until(next) || steady::now() >= load_end_steady) break;
            const auto c = load.counts();
            say("nemesis_run: published " + std::to_string(c.published) + " (confirmed " + std::to_string(c.confirmed) +
                ", failed " + std::to_string(c.failed) + "), cancels " + std::to_string(c.cancels) + ", reschedules " +
                std::to_string(c.reschedules) + ", runs " + std::to_string(fleet.runs()) + ", worker lives " +
                std::to_string(fleet.lives()));
        }
        say("nemesis_run: load over: healing every fault");
        nemesis.stop();
        fault_counts = nemesis.counts();
        fault_failures = nemesis.failures();
        load.stop(120s);
        const auto c = load.counts();
        say("nemesis_run: ledger: " + std::to_string(c.confirmed) + " jobs confirmed (" + std::to_string(c.failed) +
            " publishes failed), " + std::to_string(c.cancels) + " cancels, " + std::to_string(c.reschedules) +
            " reschedules, " + std::to_string(c.schedules) + " schedules (" + std::to_string(c.unschedules) +
            " removed); " + std::to_string(c.repeated) + " commands repeated after a failure");

        // Every job ended, or 2 minutes past the latest due time; then 15 s
        // (the checker does not judge what was due within 10 s of the end).
        const auto live = load.live_jobs();
        const auto latest = sys::time_point(std::chrono::microseconds(c.latest_due));
        const auto drain_until = steady::now() + std::max<sys::duration>(0s, latest - sys::now()) + 120s;
        std::size_t left = fleet.not_ended(live);
        auto next_note = steady::now();
        while (left > 0 && steady::now() < drain_until && !sleep_until(steady::now() + 1s)) {
            left = fleet.not_ended(live);
            if (steady::now() >= next_note) {
                say("nemesis_run: " + std::to_string(left) + " of " + std::to_string(live.size()) +
                    " jobs not ended yet");
                next_note = steady::now() + 15s;
            }
        }
        say("nemesis_run: " + std::to_string(left) + " jobs not ended; 15 s more, then the workers stop");
        sleep_until(steady::now() + 15s);
        const auto codes = fleet.stop(60s);
        for (unsigned n = 1; n <= codes.size(); ++n)
            say("nemesis_run: worker " + std::to_string(n) + " exited " +
                (codes[n - 1] ? std::to_string(*codes[n - 1]) : std::string("only to SIGKILL")));
        say("nemesis_run: stopping the cluster");
        cluster.reset();
    } catch (const std::exception& e) {
        say(std::string("nemesis_run: the run failed: ") + e.what());
        return 1;
    }

    // The verdicts.
    std::vector<std::string> check{checker, "--max-attempts", std::to_string(max_attempts), out + "/ledger",
                                   out + "/faults"};
    for (unsigned n = 1; n <= worker_count; ++n) check.push_back(out + "/worker-" + std::to_string(n) + ".jsonl");
    std::string command;
    for (const auto& a : check) command += (command.empty() ? "" : " ") + a;
    say("nemesis_run: " + command);
    const auto r = tarry_test::run_process(check, 10min);
    code = r.exit_code < 0 ? 2 : r.exit_code;
    std::string counts = "faults by kind:";
    unsigned total = 0;
    for (const auto& [kind, n] : fault_counts) {
        counts += " " + kind + " " + std::to_string(n);
        total += n;
    }
    counts += " (" + std::to_string(total) + " in all; " + std::to_string(fault_failures) + " steps failed)";
    {
        std::lock_guard lock(print_mutex);
        std::printf("%s\n", counts.c_str());
        try {
            std::fputs(lateness_summary(out, worker_count).c_str(), stdout);
        } catch (const std::exception& e) {
            std::printf("lateness: %s\n", e.what());
        }
        std::fputs(r.out.c_str(), stdout);
        std::fputs(r.err.c_str(), stdout);
        std::printf("nemesis_run: %s (seed %llu, run directory %s)\n",
                    code == 0 ? "passed: every verdict has 0 unexplained" : "FAILED: see the verdicts above",
                    static_cast<unsigned long long>(*seed), out.c_str());
        std::fflush(stdout);
    }
    return interrupted && code == 0 ? 130 : code;
}
