// What cancellation costs and how close to the due time it still works
// (bench/RESULTS.md, "Cancel and reschedule"):
//
// 1. Memory: bytes per live tombstone in a consumer's table (10^5 of them,
//    32-hex-digit ids as the publisher makes), from the allocator's own
//    count (mallinfo2), beside the ids' own bytes.
// 2. The release path: T (jobs due now, throughput) and L (jobs due over a
//    few seconds, lateness) on a consumer that reads 10^5 live tombstones
//    (of other jobs) from its queue's control stream, beside the same on a
//    consumer with none, rounds alternating, in the same run.
// 3. The margin: 1 000 jobs, each cancelled at a chosen time before it is
//    due (0 to 100 ms); per margin, how many were stopped, by the time the
//    broker confirmed the cancel.
// Needs TARRY_TEST_AMQP_URL (scripts/run-bench starts a broker).
//
//   cancel_bench [--tombstones N] [--jobs N] [--tries N] [--rounds N]
#include "consumer_bench_support.hpp"

#include "tarry/control/control_stream.hpp"
#include "tarry/control/tombstone.hpp"
#include "tarry/control/tombstone_table.hpp"
#include "tarry/publisher/publisher.hpp"

#include <malloc.h>

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <random>

namespace {

using namespace cbench;

// ---- 1. memory ---------------------------------------------------------------

void memory(std::size_t n) {
    std::mt19937_64 rng(1);
    std::vector<std::string> ids;
    ids.reserve(n);
    for (std::size_t i = 0; i < n; ++i) ids.push_back(hex_id(rng));
    const auto now = sys::now();
    malloc_trim(0);
    const auto before = mallinfo2().uordblks;
    {
        tarry::control::tombstone_table table;
        for (const auto& id : ids) table.add({id, 100, now}, now);
        const auto after = mallinfo2().uordblks;
        const double per = static_cast<double>(after - before) / static_cast<double>(n);
        std::printf("memory: %zu live tombstones, 32-byte ids: %.1f bytes each in the table "
                    "(allocator's count, ids included)\n",
                    table.size(), per);
    }
}

// ---- 2. the release path ---------------------------------------------------------

/// Appends `n` tombstones of other jobs to `queue`'s control stream.
void write_tombstones(endpoint& e, const std::string& queue, std::size_t n) {
    auto declared = tarry::control::async_declare_stream(e.conn, queue, false, boost::asio::use_future);
    check(declared.get(), "declaring the control stream");
    confirmed_publisher pub(e);
    std::mt19937_64 rng(2);
    const auto now = sys::now();
    for (std::size_t i = 0; i < n; ++i)
        pub.publish(tarry::control::stream_name(queue),
                    tarry::control::to_message({hex_id(rng), 1'000'000'000'000'000 + i, now}));
    pub.wait_all();
}

void delete_stream(endpoint& e, const std::string& queue) {
    e.ch.async_delete_queue(tarry::control::stream_name(queue), {}, boost::asio::use_future).wait_for(30s);
}

struct round_result {
    double t_jobs_per_s = 0;
    double l_p50 = 0, l_p99 = 0;
};

round_result one_round(const context& cx, endpoint& e, std::size_t tombstones, std::size_t jobs) {
    auto o = options_for(cx, fresh_queue_name(tombstones ? "cancel-live" : "cancel-none"));
    declare_work_queue(e, o.queue);
    if (tombstones) write_tombstones(e, o.queue, tombstones);
    round_result out;
    {
        // The jobs wait in the queue; the clock starts once start() has
        // returned, the stream read up to its end.
        {
            confirmed_publisher pub(e);
            for (std::size_t i = 0; i < jobs; ++i) pub.publish(o.queue, job_message("t-" + std::to_string(i), std::nullopt));
            pub.wait_all();
        }
        run_log log("t-");
        tarry::consumer worker(cx.config, o, [](const tarry::job&) { return tarry::job_outcome::success(); },
                               log.hooks());
        worker.start();
        const auto t0 = steady::now();
        if (!log.wait_succeeded(jobs, 120s)) die("T: not every job ran");
        out.t_jobs_per_s = static_cast<double>(jobs) / seconds_since(t0);
        worker.stop();
    }
    {
        run_log log("l-");
        tarry::consumer worker(cx.config, o, [](const tarry::job&) { return tarry::job_outcome::success(); },
                               log.hooks());
        worker.start();
        const std::size_t n = 2000;
        const auto base = sys::now() + 1s;
        {
            confirmed_publisher pub(e);
            for (std::size_t i = 0; i < n; ++i)
                pub.publish(o.queue, job_message("l-" + std::to_string(i), base + std::chrono::microseconds(i * 2000)));
            pub.wait_all();
        }
        if (!log.wait_succeeded(n, 60s)) die("L: not every job ran");
        std::vector<double> late;
        for (const auto& r : log.runs()) late.push_back(ms_between(r.due, r.at));
        const auto s = summarize(late);
        out.l_p50 = s.p50;
        out.l_p99 = s.p99;
        worker.stop();
    }
    if (tombstones) delete_stream(e, o.queue);
    delete_queues(e, o);
    return out;
}

void release_path(const context& cx, endpoint& e, std::size_t tombstones, std::size_t jobs, std::size_t rounds) {
    std::vector<double> t_none, t_live, p99_none, p99_live, p50_none, p50_live;
    for (std::size_t r = 0; r < rounds; ++r) {
        for (const bool live : {false, true}) {
            const auto res = one_round(cx, e, live ? tombstones : 0, jobs);
            (live ? t_live : t_none).push_back(res.t_jobs_per_s);
            (live ? p50_live : p50_none).push_back(res.l_p50);
            (live ? p99_live : p99_none).push_back(res.l_p99);
        }
    }
    const auto med = [](std::vector<double> v) { return summarize(std::move(v)).p50; };
    std::printf("release path: %zu rounds alternating, T %zu jobs due now, L 2000 jobs over 4 s\n", rounds, jobs);
    std::printf("%-26s %14s %14s %8s\n", "", "no tombstones", "live", "ratio");
    std::printf("%-26s %14.0f %14.0f %8.2f\n", "T jobs/s (median)", med(t_none), med(t_live),
                med(t_live) / med(t_none));
    std::printf("%-26s %14.3f %14.3f\n", "L lateness p50 ms (median)", med(p50_none), med(p50_live));
    std::printf("%-26s %14.3f %14.3f\n", "L lateness p99 ms (median)", med(p99_none), med(p99_live));
    std::printf("(live: %zu tombstones of other jobs read from the control stream before consuming)\n",
                tombstones);
}

// ---- 3. the margin -----------------------------------------------------------------

void margin(const context& cx, endpoint& e, std::size_t tries) {
    auto o = options_for(cx, fresh_queue_name("cancel-margin"));
    declare_work_queue(e, o.queue);
    tarry::publisher pub(e.conn);
    // The stream exists before the consumer starts: it attaches at once.
    check(pub.async_cancel(o.queue, "nothing", boost::asio::use_future).get(), "the first cancel");
    run_log log("m-");
    tarry::consumer worker(cx.config, o, [](const tarry::job&) { return tarry::job_outcome::success(); },
                           log.hooks());
    worker.start();
    const std::vector<int> margins_ms = {0, 1, 2, 5, 10, 20, 50, 100};
    const auto base = sys::now() + 3s;
    std::vector<sys::time_point> due(tries);
    {
        confirmed_publisher jobs(e);
        for (std::size_t i = 0; i < tries; ++i) {
            due[i] = to_micros(base + std::chrono::milliseconds(static_cast<long>(i) * 7));
            jobs.publish(o.queue, job_message("m-" + std::to_string(i), due[i]));
        }
        jobs.wait_all();
    }
    // Cancels in the order they fall due, each at due - margin.
    struct cancel_time {
        sys::time_point at;
        std::size_t job;
    };
    std::vector<cancel_time> plan;
    for (std::size_t i = 0; i < tries; ++i)
        plan.push_back({due[i] - std::chrono::milliseconds(margins_ms[i % margins_ms.size()]), i});
    std::sort(plan.begin(), plan.end(), [](const cancel_time& a, const cancel_time& b) { return a.at < b.at; });
    std::vector<sys::time_point> confirmed(tries);
    std::atomic<std::size_t> done{0}, failed{0};
    for (const auto& c : plan) {
        std::this_thread::sleep_until(c.at);
        pub.async_cancel(o.queue, "m-" + std::to_string(c.job),
                         [&confirmed, &done, &failed, i = c.job](std::error_code ec) {
                             confirmed[i] = sys::now();
                             if (ec) ++failed;
                             ++done;
                         });
    }
    const auto t0 = steady::now();
    while (done.load() < tries && seconds_since(t0) < 30) std::this_thread::sleep_for(10ms);
    if (done.load() < tries || failed.load() > 0) die("not every cancel was confirmed");
    std::this_thread::sleep_for(1s);  // the last jobs' due times pass
    std::vector<bool> ran(tries, false);
    for (const auto& r : log.runs()) ran[r.index] = true;
    worker.stop();

    std::printf("margin: %zu jobs 7 ms apart, each cancelled `margin` before it was due; %s\n", tries,
                e.server.c_str());
    std::printf("%10s %8s %10s %22s\n", "margin ms", "tries", "stopped", "confirm before due, ms");
    for (std::size_t m = 0; m < margins_ms.size(); ++m) {
        std::size_t n = 0, stopped = 0;
        std::vector<double> lead;
        for (std::size_t i = m; i < tries; i += margins_ms.size()) {
            ++n;
            stopped += ran[i] ? 0 : 1;
            lead.push_back(ms_between(confirmed[i], due[i]));
        }
        const auto s = summarize(lead);
        std::printf("%10d %8zu %9.1f%% %10.2f (p50) %6.2f (min)\n", margins_ms[m], n,
                    100.0 * static_cast<double>(stopped) / static_cast<double>(n), s.p50, s.min);
    }
    std::size_t ran_after = 0;
    double smallest_stopped_lead = 1e9, largest_run_lead = -1e9;
    for (std::size_t i = 0; i < tries; ++i) {
        const double lead = ms_between(confirmed[i], due[i]);
        if (ran[i]) largest_run_lead = std::max(largest_run_lead, lead);
        else smallest_stopped_lead = std::min(smallest_stopped_lead, lead);
        if (ran[i] && lead >= 100) ++ran_after;
    }
    std::printf("largest confirm-to-due lead of a job that still ran: %.2f ms; every job whose cancel was "
                "confirmed >= 100 ms before due stopped: %s\n",
                largest_run_lead, verdict(ran_after == 0));
    delete_stream(e, o.queue);
    delete_queues(e, o);
}

}  // namespace

int main(int argc, char** argv) try {
    const std::size_t tombstones = number_arg(argc, argv, "--tombstones", 100000);
    memory(tombstones);
    const context cx = context_from_env();
    endpoint broker(cx.config);
    release_path(cx, broker, tombstones, number_arg(argc, argv, "--jobs", 20000), number_arg(argc, argv, "--rounds", 3));
    margin(cx, broker, number_arg(argc, argv, "--tries", 1000));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "cancel_bench: %s\n", e.what());
    return 1;
}
