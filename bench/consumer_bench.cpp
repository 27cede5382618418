// The scheduling consumer (tarry::consumer) against a real broker, on fresh
// queues it deletes afterwards (the work queue, <q>.dead, <q>.wait.*):
//   L  lateness of 2 000 jobs due over 10 s, beside a bare sleeping thread
//   H  head-of-line: 50 near jobs behind 500, 10 000 and 100 000 far ones
//   T  throughput of jobs due now, beside a raw consume+ack loop, rabbitmq-c
//      and pika
//   R  retry storm: 1 000 jobs failing twice, exponential backoff
//   M  resident memory per held job (--held N jobs, default 100 000)
//   A  asynchronous handlers (coroutines) against 4, 16 and 64 threads,
//      jobs waiting 100 ms; memory per job in flight
//   P  parking's rate beside a raw park loop (consume, copy, confirm, ack)
// Each scenario prints a section of tables for bench/RESULTS.md; L and H
// also write SVG plots (bench/plots/ under TARRY_SOURCE_ROOT, or --svg-dir).
//
//   consumer_bench [--url AMQP_URL] [--svg-dir DIR] [--far N,N,...] [--held N] [--events] [--publisher-parks]
//                  [L] [H] [T] [R] [M] [A] [P]
//
// --events: T measures the consumer with lifecycle events on against the
// same consumer with them off, in interleaved rounds (a queue bound to
// tarry.events takes every event), instead of against the raw loop and pika.
// --publisher-parks: H's far jobs go through a publisher that parks them in
// a delay cascade (publisher_options::park_beyond), not to the work queue.
// No scenario named: all, in that order. Without --url it uses
// TARRY_TEST_AMQP_URL (scripts/with-broker, scripts/run-bench).
#include "consumer_bench_support.hpp"

#include "tarry/amqp/url.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <set>
#include <sys/stat.h>

namespace {

int run(int argc, char** argv) {
    using namespace cbench;
    context cx;
    const char* env_url = std::getenv("TARRY_TEST_AMQP_URL");
    const char* env_root = std::getenv("TARRY_SOURCE_ROOT");
    cx.url = env_url ? env_url : "";
    cx.source_root = env_root ? env_root : ".";
    bool svg_dir_given = false;
    std::vector<std::size_t> far{500, 10000, 100000};
    std::set<char> picked;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--url" && i + 1 < argc) {
            cx.url = argv[++i];
        } else if (a == "--svg-dir" && i + 1 < argc) {
            cx.svg_dir = argv[++i];
            svg_dir_given = true;
        } else if (a == "--publisher-parks") {
            cx.publisher_parks = true;
        } else if (a == "--events") {
            cx.events = true;
        } else if (a == "--held" && i + 1 < argc) {
            cx.held = std::strtoul(argv[++i], nullptr, 10);
            if (cx.held == 0) die("--held needs a positive number of jobs");
        } else if (a == "--channels" && i + 1 < argc) {
            cx.channels = std::strtoul(argv[++i], nullptr, 10);
        } else if (a == "--far" && i + 1 < argc) {
            far.clear();
            for (const char* p = argv[++i]; *p;) {
                char* end = nullptr;
                far.push_back(std::strtoul(p, &end, 10));
                p = *end ? end + 1 : end;
            }
        } else if (a.size() == 1 && std::string("LHTRMAP").find(static_cast<char>(std::toupper(a[0]))) != std::string::npos) {
            picked.insert(static_cast<char>(std::toupper(a[0])));
        } else {
            die("usage: consumer_bench [--url AMQP_URL] [--svg-dir DIR] [--far N,N,...] [--channels N] [--held N] [--events] [--publisher-parks] [L] [H] [T] [R] [M] [A] [P]");
        }
    }
    if (cx.url.empty()) die("no broker: pass --url or set TARRY_TEST_AMQP_URL");
    auto parsed = amqp::parse_url(cx.url);
    if (parsed.error) die(parsed.detail);
    cx.config = parsed.config;
    if (!svg_dir_given && env_root) {
        cx.svg_dir = std::string(env_root) + "/bench/plots";
        ::mkdir(cx.svg_dir.c_str(), 0755);
    }
    if (picked.empty()) picked = {'L', 'H', 'T', 'R', 'M', 'A', 'P'};

    std::string server;
    {
        endpoint probe(cx.config);
        server = probe.server;
    }
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::localtime(&now));
    std::printf("## Scheduling consumer (consumer_bench)\n\n%s; %u hardware threads; broker %s\n", date,
                std::thread::hardware_concurrency(), server.c_str());
    std::fflush(stdout);
    const auto t0 = steady::now();
    for (char s : std::string("LHTRMAP")) {
        if (!picked.count(s)) continue;
        const auto ts = steady::now();
        switch (s) {
            case 'L': scenario_lateness(cx); break;
            case 'H': scenario_head_of_line(cx, far); break;
            case 'T': scenario_throughput(cx); break;
            case 'R': scenario_retry(cx); break;
            case 'M': scenario_memory(cx); break;
            case 'A': scenario_async(cx); break;
            case 'P': scenario_parking(cx); break;
        }
        std::printf("(%c took %.1f s)\n", s, seconds_since(ts));
        std::fflush(stdout);
    }
    std::printf("\nconsumer_bench: done in %.1f s\n", seconds_since(t0));
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const cbench::failure& f) {
        std::fprintf(stderr, "consumer_bench: %s\n", f.what());
        return 1;
    }
}
