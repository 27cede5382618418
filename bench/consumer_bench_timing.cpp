// The consumer's timing scenarios, against a real broker:
// - L: 2 000 jobs due uniformly over [t0+2 s, t0+12 s], published in random
//   order; lateness = handler start − due (the consumer's `run` event),
//   beside a bare thread sleeping until the same due times (the floor) in
//   the same process at the same time.
// - H: far jobs published first (due t0+90 s), then 50 near jobs due 2 s
//   after the far ones are confirmed; lateness of the near jobs, with 500,
//   10 000 and 100 000 far jobs (the consumer stops once the near ones ran).
// - R: 1 000 jobs failing twice each under exponential(100 ms, ×2, 10 s)
//   retries; completion time beside the ideal schedule, early starts.
#include "consumer_bench_support.hpp"
#include "parking_publisher.hpp"
#include "svg_plot.hpp"

#include "tarry/retry/backoff.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <numeric>
#include <random>

namespace cbench {

namespace {

tarry::job_outcome succeed(const tarry::job&) { return tarry::job_outcome::success(); }

/// Fixed seed: every run (and every other tool measured) does the same work.
constexpr std::uint64_t seed = 20261122;

void print_row(const char* name, const summary& s, std::size_t early) {
    std::printf("| %s | %zu | %.3f | %.3f | %.3f | %.3f | %zu |\n", name, s.n, s.p50, s.p90, s.p99,
                s.max, early);
}

std::string svg_path(const context& cx, const char* name) {
    return cx.svg_dir.empty() ? std::string() : cx.svg_dir + "/" + name;
}

void save(const context& cx, const char* name, const svg::figure& f) {
    const auto path = svg_path(cx, name);
    if (path.empty()) return;
    if (svg::write(path, f))
        std::printf("plot: %s\n", name);
    else
        std::printf("plot: cannot write %s\n", path.c_str());
}

}  // namespace

void scenario_lateness(const context& cx) {
    constexpr std::size_t n = 2000;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> within(2.0, 12.0);
    std::vector<double> offset(n);
    for (auto& o : offset) o = within(rng);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);

    endpoint admin(cx.config);
    const auto opts = options_for(cx, fresh_queue_name("lateness"));
    declare_work_queue(admin, opts.queue);
    run_log log("L");
    std::vector<sys::time_point> due(n);
    std::vector<double> floor_ms(n, 0);
    sys::time_point t0;
    double publish_s = 0;
    bool all_ran = false;
    {
        tarry::consumer c(cx.config, opts, succeed, log.hooks());
        c.start();
        t0 = to_micros(sys::now());
        for (std::size_t i = 0; i < n; ++i)
            due[i] = to_micros(t0 + std::chrono::duration_cast<sys::duration>(
                                        std::chrono::duration<double>(offset[i])));
        // The floor: one bare thread sleeping until each due time in order.
        std::thread floor([&] {
            std::vector<std::size_t> by_due(n);
            std::iota(by_due.begin(), by_due.end(), 0);
            std::sort(by_due.begin(), by_due.end(), [&](auto a, auto b) { return due[a] < due[b]; });
            const auto w0 = sys::now();
            const auto s0 = steady::now();
            for (auto i : by_due) {
                const auto target = s0 + (due[i] - w0);
                std::this_thread::sleep_until(target);
                floor_ms[i] = std::chrono::duration<double, std::milli>(steady::now() - target).count();
            }
        });
        const auto p0 = steady::now();
        {
            confirmed_publisher pub(admin);
            for (auto i : order) pub.publish(opts.queue, job_message("L" + std::to_string(i), due[i]));
            pub.wait_all();
        }
        publish_s = seconds_since(p0);
        all_ran = log.wait_runs(n, 40s);
        floor.join();
        c.stop();
    }
    delete_queues(admin, opts);

    const auto runs = log.runs();
    std::vector<double> late;
    std::vector<svg::point> tarry_pts, floor_pts;
    std::size_t early = 0, due_mismatch = 0;
    for (const auto& r : runs) {
        if (r.index >= n) continue;
        if (r.at < r.due) ++early;
        if (r.due - due[r.index] > 1us || due[r.index] - r.due > 1us) ++due_mismatch;
        late.push_back(ms_between(r.due, r.at));
        tarry_pts.emplace_back(ms_between(t0, due[r.index]) / 1000, late.back());
    }
    for (std::size_t i = 0; i < n; ++i) floor_pts.emplace_back(ms_between(t0, due[i]) / 1000, floor_ms[i]);
    const auto s = summarize(late);
    const auto f = summarize(floor_ms);

    std::printf("\n### L: lateness\n\n%zu jobs due uniformly in [t0+2 s, t0+12 s], published in random order "
                "(publish + confirm took %.3f s); %zu of %zu ran%s; floor = one thread sleeping until the "
                "same due times, alongside.\n\n",
                n, publish_s, runs.size(), n, all_ran ? "" : " (TIMED OUT)");
    std::printf("| lateness (ms) | jobs | p50 | p90 | p99 | max | early |\n|---|---:|---:|---:|---:|---:|---:|\n");
    print_row("tarry consumer", s, early);
    print_row("floor (sleep_until)", f, 0);
    std::printf("| tarry / floor | | %.2f× | %.2f× | %.2f× | %.2f× | |\n\n", s.p50 / f.p50, s.p90 / f.p90,
                s.p99 / f.p99, s.max / f.max);
    if (due_mismatch) std::printf("note: %zu due times read back differently from those published\n", due_mismatch);
    std::printf("targets: p50 <= 0.2 ms: %s (%.3f); p99 <= 1.5x floor (%.3f) and <= 5 ms: %s (%.3f); "
                "max <= 1.5x floor (%.3f) and <= 20 ms: %s (%.3f); 0 early: %s (%zu)\n",
                verdict(all_ran && s.p50 <= 0.2), s.p50, 1.5 * f.p99,
                verdict(all_ran && s.p99 <= 1.5 * f.p99 && s.p99 <= 5), s.p99, 1.5 * f.max,
                verdict(all_ran && s.max <= 1.5 * f.max && s.max <= 20), s.max, verdict(early == 0), early);

    svg::figure scatter;
    scatter.title = "L: lateness of each job (tarry consumer vs a bare sleeping thread)";
    scatter.note = "2000 jobs due uniformly over [t0+2 s, t0+12 s]; every point is one job";
    scatter.x = {"due time (s after t0)", false, 0.0, 13.0};
    scatter.y = {"lateness (ms, log scale)", true, {}, {}};
    scatter.data = {{"floor: sleep_until", "#999999", svg::thin(floor_pts, 1000, 20), false},
                    {"tarry: handler start - due", "#d62728", svg::thin(tarry_pts, 1000, 20), false}};
    save(cx, "consumer-L-lateness.svg", scatter);
    svg::figure cdf;
    cdf.title = "L: lateness CDF, tarry consumer vs floor";
    cdf.note = "fraction of the 2000 jobs started within x ms of their due time";
    cdf.x = {"lateness (ms, log scale)", true, {}, {}};
    cdf.y = {"fraction of jobs", false, 0.0, 1.0};
    cdf.data = {{"floor: sleep_until", "#777777", svg::cdf(floor_ms, 400), true},
                {"tarry consumer", "#d62728", svg::cdf(late, 400), true}};
    save(cx, "consumer-L-cdf.svg", cdf);
}

namespace {

struct hol_result {
    std::size_t far = 0;
    std::chrono::seconds far_due{};
    std::size_t ran = 0, early = 0;
    bool publisher_parks = false;  // the far jobs went through a publisher that parks them
    double publish_far_s = 0;
    double last_near_start_s = 0;  // after t0, the start of the far publishing
    tarry::consumer_stats when_near_published, at_end;
    summary s;
    std::vector<double> in_run_order;  // lateness ms of the near jobs, in the order they started
};

hol_result head_of_line(const context& cx, std::size_t far_n) {
    constexpr std::size_t near_n = 50;
    hol_result r;
    r.far = far_n;
    // Beyond 10 000 far jobs, parking them outlasts 90 s (see RESULTS.md):
    // a shorter due time keeps the run within the time budget. Beyond
    // 100 000, publishing them takes about a minute: due in 30 min, past
    // the hold horizon, so that none falls due during the run.
    r.far_due = far_n > 100000 ? std::chrono::seconds(30 * 60) : far_n > 10000 ? 60s : 90s;
    endpoint admin(cx.config);
    const auto opts = options_for(cx, fresh_queue_name("hol-" + std::to_string(far_n)));
    declare_work_queue(admin, opts.queue);
    run_log log("N");
    sys::time_point t0;
    // Lives until the queues are deleted: deleting its cascade (with the far
    // jobs in it) while the near ones run would load the broker then.
    std::optional<parking_publisher> parker;
    r.publisher_parks = cx.publisher_parks;
    {
        tarry::consumer c(cx.config, opts, succeed, log.hooks());
        c.start();
        {
            confirmed_publisher pub(admin);
            if (cx.publisher_parks) parker.emplace(admin, opts.hold_horizon);
            t0 = to_micros(sys::now());
            const auto far_due = t0 + r.far_due;
            const auto p0 = steady::now();
            for (std::size_t i = 0; i < far_n; ++i) {
                if (parker)
                    parker->publish(opts.queue, "F" + std::to_string(i), far_due);
                else
                    pub.publish(opts.queue, job_message("F" + std::to_string(i), far_due));
            }
            if (parker) parker->wait_all();
            pub.wait_all();
            r.publish_far_s = seconds_since(p0);
            r.when_near_published = c.stats();
            const auto near_due = to_micros(sys::now()) + 2s;
            for (std::size_t i = 0; i < near_n; ++i)
                pub.publish(opts.queue, job_message("N" + std::to_string(i), near_due));
            pub.wait_all();
        }
        log.wait_runs(near_n, 90s);
        r.at_end = c.stats();
        c.stop();
    }
    delete_queues(admin, opts);
    auto runs = log.runs();
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.at < b.at; });
    r.ran = runs.size();
    for (const auto& x : runs) {
        if (x.at < x.due) ++r.early;
        r.in_run_order.push_back(ms_between(x.due, x.at));
        r.last_near_start_s = std::max(r.last_near_start_s, ms_between(t0, x.at) / 1000);
    }
    r.s = summarize(r.in_run_order);
    return r;
}

}  // namespace

void scenario_head_of_line(const context& cx, const std::vector<std::size_t>& far_counts) {
    std::vector<hol_result> results;
    for (auto far : far_counts) results.push_back(head_of_line(cx, far));
    const auto defaults = options_for(cx, "x");
    std::printf("\n### H: head-of-line\n\nFar jobs (all due at t0+90 s, or t0+60 s beyond 10 000 of them; t0: the "
                "far publishing starts) published first, then 50 near jobs due 2 s after the far ones were "
                "confirmed; default options (max_held %zu, up to %zu lanes consuming one at a time, prefetch %u, "
                "%zu workers); the consumer "
                "stops once the near jobs ran. \"then\": the consumer's counters when the near jobs were "
                "published.\n\n",
                defaults.max_held, defaults.effective_channels(), defaults.effective_prefetch(), defaults.workers);
    std::printf("| far jobs | far due | far published + confirmed (s) | taken / held / parked then | parked/s | "
                "near ran | near p50 / p99 / max (ms) | last near start (s after t0) | early | held / parked at end | "
                "target p99 <= 5 ms |\n|---:|---:|---:|---|---:|---:|---|---:|---:|---|---|\n");
    for (const auto& r : results) {
        const auto& a = r.when_near_published;
        const auto& b = r.at_end;
        // Parked by the publisher: each far job is parked as it is published.
        const double parked = r.publisher_parks ? static_cast<double>(r.far) : static_cast<double>(a.parked);
        std::printf("| %zu%s | t0+%llds | %.2f | %llu / %zu / %llu | %.0f | %zu | %.3f / %.3f / %.3f | %.2f | %zu | %zu / %llu | %s |\n",
                    r.far, r.publisher_parks ? " (parked by the publisher)" : "",
                    static_cast<long long>(r.far_due.count()), r.publish_far_s,
                    static_cast<unsigned long long>(a.received), a.held, static_cast<unsigned long long>(a.parked),
                    parked / r.publish_far_s, r.ran, r.s.p50, r.s.p99, r.s.max,
                    r.last_near_start_s, r.early,
                    b.held, static_cast<unsigned long long>(b.parked), verdict(r.ran == 50 && r.s.p99 <= 5));
    }
    for (const auto& r : results)
        if (r.publish_far_s >= static_cast<double>(r.far_due.count()) - 2)
            std::printf("\nnote: with %zu far jobs the broker accepted them only by t0+%.1f s, when they were (nearly) "
                        "due: it held the publisher back while the consumer parked them at %.0f/s, so the near jobs "
                        "were published only then, and their lateness against their own due time understates "
                        "the blocking.\n",
                        r.far, r.publish_far_s,
                        static_cast<double>(r.when_near_published.parked) / r.publish_far_s);
    svg::figure f;
    f.title = "H: lateness of the 50 near jobs behind far jobs";
    f.note = "all 50 due at the same instant; x = the order in which they started";
    f.x = {"near job, in start order", false, 0.0, 51.0};
    f.y = {"lateness (ms, log scale)", true, {}, {}};
    const char* colors[] = {"#1f77b4", "#ff7f0e", "#d62728", "#2ca02c"};
    for (std::size_t k = 0; k < results.size(); ++k) {
        svg::series s{std::to_string(results[k].far) + " far jobs", colors[k % 4], {}, false};
        for (std::size_t i = 0; i < results[k].in_run_order.size(); ++i)
            s.points.emplace_back(static_cast<double>(i + 1), results[k].in_run_order[i]);
        f.data.push_back(std::move(s));
    }
    save(cx, "consumer-H-lateness.svg", f);
}

void scenario_retry(const context& cx) {
    constexpr std::size_t n = 1000;
    const std::chrono::milliseconds delays[] = {100ms, 200ms};
    std::mt19937_64 rng(seed + 1);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);

    endpoint admin(cx.config);
    auto opts = options_for(cx, fresh_queue_name("retry"));
    opts.retry = tarry::retry::backoff_policy::exponential(100ms, 2.0, 10s);
    declare_work_queue(admin, opts.queue);
    run_log log("R");
    const auto fail_twice = [](const tarry::job& j) {
        return j.attempt <= 2 ? tarry::job_outcome::failure("planned failure") : tarry::job_outcome::success();
    };
    std::vector<sys::time_point> due(n);
    sys::time_point t0;
    tarry::consumer_stats st;
    bool done = false;
    {
        tarry::consumer c(cx.config, opts, fail_twice, log.hooks());
        c.start();
        t0 = to_micros(sys::now());
        for (std::size_t i = 0; i < n; ++i) due[i] = t0 + 1s + std::chrono::milliseconds(i);
        {
            confirmed_publisher pub(admin);
            for (auto i : order) pub.publish(opts.queue, job_message("R" + std::to_string(i), due[i]));
            pub.wait_all();
        }
        done = log.wait_succeeded(n, 60s);
        st = c.stats();
        c.stop();
    }
    delete_queues(admin, opts);

    // start[i][a-1]: when attempt a of job i started.
    std::vector<std::array<std::optional<sys::time_point>, 3>> start(n);
    std::size_t early = 0, early_vs_backoff = 0, odd = 0;
    std::vector<double> first_late, retry_late, overhead;
    for (const auto& r : log.runs()) {
        if (r.index >= n || r.attempt < 1 || r.attempt > 3 || start[r.index][r.attempt - 1]) {
            ++odd;
            continue;
        }
        start[r.index][r.attempt - 1] = r.at;
        if (r.at < r.due) ++early;
        (r.attempt == 1 ? first_late : retry_late).push_back(ms_between(r.due, r.at));
    }
    for (const auto& s : start)
        for (int a = 0; a < 2; ++a) {
            if (!s[a] || !s[a + 1]) continue;
            const double gap = ms_between(*s[a], *s[a + 1]);
            const double backoff = static_cast<double>(delays[a].count());
            if (gap < backoff) ++early_vs_backoff;
            overhead.push_back(gap - backoff);
        }
    const double total = ms_between(t0, log.last_success()) / 1000;
    const double ideal = ms_between(t0, due[n - 1] + 300ms) / 1000;
    const auto a = summarize(first_late), b = summarize(retry_late), o = summarize(overhead);
    std::printf("\n### R: retry storm\n\n%zu jobs first due at t0+1 s + i ms (i < %zu), published in random order, "
                "each failing on attempts 1 and 2; retry = exponential(100 ms, 2.0, 10 s), no jitter.\n\n", n, n);
    std::printf("| figure | value |\n|---|---:|\n");
    std::printf("| completed (succeeded on attempt 3) | %zu of %zu%s |\n", log.succeeded(), n, done ? "" : " (TIMED OUT)");
    std::printf("| runs / retried / dead-lettered (stats) | %llu / %llu / %llu |\n",
                static_cast<unsigned long long>(st.started), static_cast<unsigned long long>(st.retried),
                static_cast<unsigned long long>(st.dead_lettered));
    std::printf("| last completion, s after t0 | %.3f |\n| ideal (last first due + 100 ms + 200 ms), s after t0 | %.3f |\n",
                total, ideal);
    std::printf("| overrun | %.1f ms |\n", (total - ideal) * 1000);
    std::printf("| lateness of first attempts p50 / p99 / max (ms) | %.3f / %.3f / %.3f |\n", a.p50, a.p99, a.max);
    std::printf("| lateness of retries vs their due p50 / p99 / max (ms) | %.3f / %.3f / %.3f |\n", b.p50, b.p99, b.max);
    std::printf("| retry gap beyond the backoff (start to start) p50 / p99 / max (ms) | %.3f / %.3f / %.3f |\n",
                o.p50, o.p99, o.max);
    std::printf("| early starts (before due / before previous start + backoff) | %zu / %zu |\n", early,
                early_vs_backoff);
    if (odd) std::printf("| unexpected runs (duplicates, other attempts) | %zu |\n", odd);
    std::printf("\ntargets: all complete: %s; 0 early: %s\n",
                verdict(done && st.dead_lettered == 0), verdict(early == 0 && early_vs_backoff == 0));
}

}  // namespace cbench
