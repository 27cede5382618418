// A worker's start as its queue's control stream grows (bench/RESULTS.md,
// "Start with a long control stream"): N entries in the stream, half
// tombstones of other jobs, half run claims of ten periodic schedules, all
// written now (so every one is live: tombstones count 7 days, claims a
// day). Per N, a worker process of its own (this program again, with
// --start-worker, so that one round's heap does not serve the next):
//
// - first run: the consumer constructed → a job that was waiting, due now,
//   starts (start() reads the stream up to its end before it consumes);
// - RSS: the worker process's resident memory after that first run minus
//   before the consumer was constructed, beside N = 0's in the same run;
// - reconnect: the broker closes the consuming connection (rabbitmqctl
//   close_connection has returned) → a job published then, due now,
//   starts.
//
// Two workers per N, one after the other: the first finds no checkpoint (it
// reads the whole stream, then writes one: it waits for its announcement
// before it stops), the second restores that checkpoint.
//
// Needs TARRY_TEST_AMQP_URL and TARRY_TEST_BROKER_DIR (scripts/run-bench, or
// scripts/with-broker).
//
//   control_start_bench [--max N] [--only N]
//     rounds N = 0, 10^4, 10^5, 10^6, up to --max; with --only, 0 and that one
#include "child_program.hpp"
#include "consumer_bench_support.hpp"

#include "tarry/control/checkpoint.hpp"
#include "tarry/control/checkpoint_stream.hpp"
#include "tarry/control/control_stream.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/time/epoch_text.hpp"

#include <malloc.h>

#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <random>
#include <sstream>

namespace {

using namespace cbench;

/// Appends n entries to `queue`'s control stream: even ones tombstones of
/// other jobs (32-hex-digit ids, as the publisher makes), odd ones the run
/// claims of ten schedules' successive occurrences.
void fill_stream(endpoint& e, const std::string& queue, std::size_t n) {
    auto declared = tarry::control::async_declare_stream(e.conn, queue, false, boost::asio::use_future);
    check(declared.get(), "declaring the control stream");
    if (n == 0) return;
    confirmed_publisher pub(e);
    std::mt19937_64 rng(3);
    const auto now = sys::now();
    const auto stream = tarry::control::stream_name(queue);
    for (std::size_t i = 0; i < n; ++i) {
        if (i % 2 == 0) {
            pub.publish(stream, tarry::control::to_message({hex_id(rng), 1'000'000'000'000'000 + i, now}));
            continue;
        }
        tarry::control::run_claim c;
        c.schedule_id = "every-second-" + std::to_string(i % 10);
        c.nominal = std::to_string(1'700'000'000 + i / 10);
        c.occurrence_id = c.schedule_id + "@" + c.nominal;
        c.copy = hex_id(rng);
        c.written = now;
        pub.publish(stream, tarry::control::to_entry(c));
    }
    pub.wait_all();
}

/// Waits (at most 120 s) for a checkpoint's announcement in `queue`'s
/// control stream, read from the entries written at `since` or later (a
/// timestamp offset): the first worker writes one once it has read the
/// stream.
bool wait_checkpointed(endpoint& e, const std::string& queue, sys::time_point since) {
    auto ch = e.open_channel();
    check(ch.async_qos({100, 0, false}, boost::asio::use_future).get(), "qos");
    auto seen = std::make_shared<std::promise<void>>();
    auto once = std::make_shared<std::once_flag>();
    amqp::consume_options co;
    co.queue = tarry::control::stream_name(queue);
    co.arguments.set("x-stream-offset", amqp::wire::timestamp_value{tarry::epoch_whole_seconds(since) - 1});
    amqp::consumer_handlers h{[ch, seen, once](amqp::delivery d) {
                                  ch.async_ack(d.delivery_tag, {}, [](std::error_code) {});
                                  if (d.msg.properties.type == tarry::control::checkpointed_type)
                                      std::call_once(*once, [&] { seen->set_value(); });
                              },
                              [](std::error_code) {}};
    ch.async_consume(co, h, boost::asio::use_future).get();
    const bool ok = seen->get_future().wait_for(120s) == std::future_status::ready;
    ch.async_close(boost::asio::use_future).wait_for(10s);
    return ok;
}

struct worker_figures {
    double first_run_s = 0;
    double rss_mib = 0;
    double reconnect_s = 0;
};

// ---- the worker process ------------------------------------------------------

int start_worker(const context& cx, const std::string& queue, bool expect_checkpoint) {
    const char* dir = std::getenv("TARRY_TEST_BROKER_DIR");
    if (dir == nullptr || *dir == '\0') die("TARRY_TEST_BROKER_DIR is unset: run under scripts/with-broker");
    endpoint e(cx.config);
    {
        confirmed_publisher pub(e);
        pub.publish(queue, job_message("j-0", sys::now()));
        pub.wait_all();
    }
    auto o = options_for(cx, queue);
    auto cfg = cx.config;
    cfg.connection_name = "control-start-" + queue;
    run_log log("j-");
    auto hooks = log.hooks();
    // What the consumer says of its connections and its control stream, as
    // it says it (checkpoints restored, written, passed over).
    hooks.on_connection = [](const std::string& line) { std::fprintf(stderr, "  worker: %s\n", line.c_str()); };
    malloc_trim(0);
    const long rss0 = rss_bytes();
    const auto t0 = steady::now();
    const auto started = sys::now();
    tarry::consumer worker(cfg, o, [](const tarry::job&) { return tarry::job_outcome::success(); }, hooks);
    worker.start();
    if (!log.wait_runs(1, 600s)) die("the waiting job did not run within 600 s of the start");
    worker_figures f;
    f.first_run_s = seconds_since(t0);
    f.rss_mib = static_cast<double>(rss_bytes() - rss0) / (1024.0 * 1024.0);

    const std::string broker = cx.source_root + "/scripts/broker";
    const auto pids = consuming_connections(broker, dir, cfg.connection_name);
    if (pids.empty()) die("no connection named '" + cfg.connection_name + "' on the broker");
    for (const auto& pid : pids) run_command(broker + " ctl " + dir + " close_connection '" + pid + "' 'bench cuts'");
    const auto cut = steady::now();
    {
        confirmed_publisher pub(e);
        pub.publish(queue, job_message("j-1", sys::now()));
        pub.wait_all();
    }
    if (!log.wait_runs(2, 600s)) die("the job published after the cut did not run within 600 s");
    f.reconnect_s = seconds_since(cut);
    // The next worker of this round starts from the checkpoint this one writes.
    if (expect_checkpoint && !wait_checkpointed(e, queue, started)) die("no checkpoint written within 120 s");
    worker.stop();
    std::printf("result %.6f %.3f %.6f\n", f.first_run_s, f.rss_mib, f.reconnect_s);
    std::fflush(stdout);
    return 0;
}

// ---- the rounds --------------------------------------------------------------

/// A round's two workers: the first finds no checkpoint (and writes one),
/// the second restores it.
struct round_figures {
    worker_figures first, restored;
};

round_figures one_round(const context& cx, endpoint& e, std::size_t n) {
    auto o = options_for(cx, fresh_queue_name("control-start"));
    declare_work_queue(e, o.queue);
    const auto filling = steady::now();
    fill_stream(e, o.queue, n);
    std::fprintf(stderr, "  %zu entries written in %.1f s\n", n, seconds_since(filling));
    round_figures r;
    for (auto* f : {&r.first, &r.restored}) {
        // Fewer entries than control_checkpoint_every: no checkpoint is written.
        const bool expect = f == &r.first && n >= o.control_checkpoint_every;
        child_program child({"/proc/self/exe", "--start-worker", o.queue, expect ? "checkpoint" : "none"});
        const auto line = child.wait_for_line("result ", std::chrono::minutes(25));
        child.stop();
        if (line.empty()) die("a worker of the round with " + std::to_string(n) + " entries printed no result");
        std::istringstream in(line.substr(std::strlen("result ")));
        in >> f->first_run_s >> f->rss_mib >> f->reconnect_s;
    }
    e.ch.async_delete_queue(tarry::control::stream_name(o.queue), {}, boost::asio::use_future).wait_for(60s);
    e.ch.async_delete_queue(tarry::control::checkpoint_stream_name(o.queue), {}, boost::asio::use_future).wait_for(60s);
    delete_queues(e, o);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        auto cx = context_from_env();
        const char* root = std::getenv("TARRY_SOURCE_ROOT");
        cx.source_root = root ? root : ".";
        for (int i = 1; i + 1 < argc; ++i)
            if (std::strcmp(argv[i], "--start-worker") == 0)
                return start_worker(cx, argv[i + 1], i + 2 < argc && std::strcmp(argv[i + 2], "checkpoint") == 0);
        const std::size_t max = number_arg(argc, argv, "--max", 1'000'000);
        const std::size_t only = number_arg(argc, argv, "--only", 0);
        endpoint e(cx.config);
        std::printf("Start with a long control stream (%s), entries half tombstones, half run claims\n\n",
                    e.server.c_str());
        std::printf("| entries | worker | first run after start, s | ratio to 0's | RSS of the worker, MiB | "
                    "beyond 0's, MiB | job after a reconnect, s |\n|---:|---|---:|---:|---:|---:|---:|\n");
        std::fflush(stdout);
        round_figures empty;
        for (std::size_t n : {std::size_t{0}, std::size_t{10'000}, std::size_t{100'000}, std::size_t{1'000'000}}) {
            if (n > max) break;
            if (only != 0 && n != 0 && n != only) continue;
            const auto r = one_round(cx, e, n);
            if (n == 0) empty = r;
            const auto row = [n](const char* which, const worker_figures& f, const worker_figures& base) {
                std::printf("| %zu | %s | %.3f | %.1f | %.1f | %.1f | %.3f |\n", n, which, f.first_run_s,
                            base.first_run_s > 0 ? f.first_run_s / base.first_run_s : 0.0, f.rss_mib,
                            f.rss_mib - base.rss_mib, f.reconnect_s);
            };
            row("first (no checkpoint)", r.first, empty.first);
            row("next (restores)", r.restored, empty.restored);
            std::fflush(stdout);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "control_start_bench: %s\n", e.what());
        return 1;
    }
}
