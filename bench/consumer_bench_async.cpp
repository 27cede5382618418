// The consumer's scenario A, against a real broker: asynchronous handlers
// (coroutines on the consumer's I/O thread) against the thread pool, jobs
// that wait 100 ms.
// - Rounds: 1 000 jobs due now, published before the consumer starts, each
//   waiting 100 ms (a steady_timer as a coroutine, a sleep on a worker
//   thread), with coroutines (max_in_flight 1 000) and with 4, 16 and 64
//   worker threads, in one run: jobs/s from the first handler start to the
//   last success, and lateness (start − due, which here is the wait for a
//   free slot) p50 / p99 / max. Ratios against the 64-thread pool.
// - Memory per job in flight: RSS with every job of a round in flight at
//   once (10 000 coroutines, or 64 threads), minus RSS before the consumer
//   took them, per job; all included (the delivery, its held job, the
//   coroutine frame or the thread's stack touched so far).
#include "consumer_bench_support.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <malloc.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // Asio's coroutine frames (a GCC 12 false positive)
#endif

namespace cbench {

namespace {

namespace asio = boost::asio;

constexpr std::size_t round_jobs = 1000;
constexpr auto job_wait = 100ms;

/// How a round runs its handlers: coroutines (threads = 0) or a pool.
struct pool_kind {
    std::size_t threads = 0;
    std::string name() const { return threads == 0 ? "coroutines" : std::to_string(threads) + " threads"; }
};

asio::awaitable<tarry::job_outcome> wait_on_timer(std::chrono::milliseconds d) {
    asio::steady_timer t(co_await asio::this_coro::executor, d);
    co_await t.async_wait(asio::use_awaitable);
    co_return tarry::job_outcome::success();
}

/// A consumer of `o` whose handler waits `d`, as a coroutine or on a thread.
std::unique_ptr<tarry::consumer> waiting_consumer(const context& cx, tarry::subscription_options o, pool_kind k,
                                                  std::chrono::milliseconds d, tarry::consumer_hooks hooks) {
    if (k.threads == 0)
        return std::make_unique<tarry::consumer>(
            cx.config, std::move(o), [d](const tarry::job&) { return wait_on_timer(d); }, std::move(hooks));
    o.workers = k.threads;
    return std::make_unique<tarry::consumer>(
        cx.config, std::move(o),
        [d](const tarry::job&) {
            std::this_thread::sleep_for(d);
            return tarry::job_outcome::success();
        },
        std::move(hooks));
}

void prepublish_due_now(endpoint& admin, const std::string& queue, const std::string& prefix, std::size_t n) {
    confirmed_publisher pub(admin);
    const auto now = sys::now();
    for (std::size_t i = 0; i < n; ++i) pub.publish(queue, job_message(prefix + std::to_string(i), now));
    pub.wait_all();
}

struct round_result {
    double jobs_per_s = 0;
    summary lateness;  // ms
};

round_result timed_round(const context& cx, endpoint& admin, pool_kind k) {
    auto opts = options_for(cx, fresh_queue_name("async"));
    declare_work_queue(admin, opts.queue);
    prepublish_due_now(admin, opts.queue, "A", round_jobs);
    run_log log("A");
    bool finished = false;
    {
        auto c = waiting_consumer(cx, opts, k, job_wait, log.hooks());
        c->start();
        finished = log.wait_succeeded(round_jobs, 120s);
        c->stop();
    }
    delete_queues(admin, opts);
    if (!finished) die("async: " + k.name() + " did not finish " + std::to_string(round_jobs) + " jobs in 120 s");
    const auto runs = log.runs();
    auto first = runs.front().at;
    std::vector<double> late;
    for (const auto& r : runs) {
        first = std::min(first, r.at);
        late.push_back(ms_between(r.due, r.at));
    }
    round_result out;
    out.jobs_per_s = static_cast<double>(round_jobs) /
                     std::chrono::duration<double>(log.last_success() - first).count();
    out.lateness = summarize(std::move(late));
    return out;
}

/// RSS per job with `in_flight` jobs running at once (each waiting 5 s).
double memory_per_job(const context& cx, endpoint& admin, pool_kind k, std::size_t in_flight) {
    auto opts = options_for(cx, fresh_queue_name("async-memory"));
    opts.max_in_flight = in_flight;
    declare_work_queue(admin, opts.queue);
    prepublish_due_now(admin, opts.queue, "B", in_flight);
    run_log log("B");
    double per_job = 0;
    bool all = false;
    {
        auto c = waiting_consumer(cx, opts, k, 5s, log.hooks());
        ::malloc_trim(0);
        const long before = rss_bytes();
        c->start();
        all = log.wait_runs(in_flight, 60s);
        std::this_thread::sleep_for(200ms);  // every run under way
        per_job = static_cast<double>(rss_bytes() - before) / static_cast<double>(in_flight);
        c->stop();
    }
    delete_queues(admin, opts);
    if (!all) die("async memory: " + k.name() + " did not have " + std::to_string(in_flight) + " jobs in flight");
    return per_job;
}

}  // namespace

void scenario_async(const context& cx) {
    endpoint admin(cx.config);
    const std::vector<pool_kind> kinds{{0}, {4}, {16}, {64}};
    std::vector<round_result> results;
    for (const auto& k : kinds) results.push_back(timed_round(cx, admin, k));
    const double baseline = results.back().jobs_per_s;  // 64 threads
    std::printf("\n### A: asynchronous handlers, jobs waiting %lld ms\n\n",
                static_cast<long long>(job_wait.count()));
    std::printf("%zu jobs due now, published before the consumer starts; each waits %lld ms (a steady_timer "
                "in a coroutine, or a sleep on a worker thread). Lateness = start - due: the wait for a free "
                "slot. Cores: %u.\n\n",
                round_jobs, static_cast<long long>(job_wait.count()), std::thread::hardware_concurrency());
    std::printf("| handlers | jobs/s | x 64 threads | lateness p50 ms | p99 ms | max ms |\n|---|---|---|---|---|---|\n");
    for (std::size_t i = 0; i < kinds.size(); ++i) {
        const auto& r = results[i];
        std::printf("| %s | %.0f | %.2f | %.1f | %.1f | %.1f |\n", kinds[i].name().c_str(), r.jobs_per_s,
                    r.jobs_per_s / baseline, r.lateness.p50, r.lateness.p99, r.lateness.max);
    }
    const double coroutine_bytes = memory_per_job(cx, admin, {0}, 10000);
    const double thread_bytes = memory_per_job(cx, admin, {64}, 64);
    std::printf("\nMemory per job in flight (RSS with all of them running, minus before, per job; the delivery "
                "and its bookkeeping included):\n\n| handlers | in flight | bytes per job |\n|---|---|---|\n"
                "| coroutines | 10000 | %.0f |\n| 64 threads | 64 | %.0f |\n",
                coroutine_bytes, thread_bytes);
}

}  // namespace cbench
