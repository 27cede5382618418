// The consumer's load scenarios, against a real broker:
// - T: 20 000 jobs due now (no schedule header), published before the
//   consumer starts, no-op handler: jobs/s from the first handler start to
//   the last success, beside a raw consume-and-ack loop on tarry's AMQP
//   client, rabbitmq-c (bench/rabbitmq_c_consume.c, the C ceiling) and pika
//   (bench/pika_consume.py), same queue size, same prefetch; nine
//   interleaved rounds, medians. With --events: the consumer
//   with lifecycle events on against off instead.
// - M: resident memory per held job: 100 000 jobs with 100-byte bodies held
//   (due 5–10 min ahead), RSS before and after, minus the bodies and their
//   encoded properties (what the broker sent); and the same for a bare
//   delay_queue of items shaped like the consumer's held job. Then, with
//   every job held, the broker closes the consuming connection: the time
//   to consume again and the longest stall; and, once they are given back,
//   a fresh consumer's time to hold them all (consumer_bench_recovery.cpp).
#include "consumer_bench_recovery.hpp"
#include "consumer_bench_support.hpp"
#include "throughput_rounds.hpp"

#include "tarry/amqp/wire/properties.hpp"
#include "tarry/schedule/delay_queue.hpp"

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <random>

#include <malloc.h>
#include <unistd.h>

namespace cbench {

namespace {

// T with lifecycle events on against off (--events), interleaved rounds.
void throughput_with_events(const context& cx) {
    constexpr int rounds = 9;
    endpoint admin(cx.config);
    std::vector<double> off, unbound, sunk, batched, unbound_ratios, sunk_ratios, batched_ratios;
    tarry::consumer_stats st_off, st_unbound, st_sunk, st_batched;
    for (int r = 0; r < rounds; ++r) {
        off.push_back(tarry_round(cx, admin, st_off, events_mode::off));
        unbound.push_back(tarry_round(cx, admin, st_unbound, events_mode::unbound));
        sunk.push_back(tarry_round(cx, admin, st_sunk, events_mode::sunk));
        batched.push_back(tarry_round(cx, admin, st_batched, events_mode::batched));
        unbound_ratios.push_back(unbound.back() / off.back());
        sunk_ratios.push_back(sunk.back() / off.back());
        batched_ratios.push_back(batched.back() / off.back());
    }
    std::printf("\n### T: throughput with lifecycle events on and off\n\n%zu jobs due now (no schedule header), "
                "published before consuming, no-op handler, 4 workers; first handler start to last success; %d "
                "interleaved rounds (off, on with no queue bound, on with a queue bound to tarry.events with "
                "#.<queue> taking every event: 2 per job, run and succeeded; and the same with "
                "events_per_message %zu). Each ratio is the median of the rounds' on / off.\n\n",
                throughput_jobs, rounds, batch_events);
    std::printf("| consumer | jobs/s (median) | rounds | vs events off |\n|---|---:|---|---:|\n");
    std::printf("| tarry consumer, events off | %.0f | %s | 1.00 |\n", median(off), rounds_text(off).c_str());
    const auto row = [&](const char* what, const std::vector<double>& v, std::vector<double> ratios) {
        const double ratio = median(ratios);
        std::sort(ratios.begin(), ratios.end());
        std::printf("| tarry consumer, events on, %s | %.0f | %s | **%.2f** (rounds %.2f-%.2f; medians %.2f) |\n",
                    what, median(v), rounds_text(v).c_str(), ratio, ratios.front(), ratios.back(),
                    median(v) / median(off));
        return ratio;
    };
    row("no queue bound", unbound, unbound_ratios);
    const double one_each = row("a queue takes them, one a message", sunk, sunk_ratios);
    const std::string batched_name = "a queue takes them, up to " + std::to_string(batch_events) + " a message";
    const double ratio = row(batched_name.c_str(), batched, batched_ratios);
    const std::pair<const tarry::consumer_stats*, const char*> stats[] = {
        {&st_unbound, "no queue bound"}, {&st_sunk, "one a message"}, {&st_batched, batched_name.c_str()}};
    for (const auto& [st, name] : stats)
        std::printf("\nlast round with events (%s): succeeded %llu, events published %llu, dropped %llu\n", name,
                    static_cast<unsigned long long>(st->succeeded),
                    static_cast<unsigned long long>(st->events_published),
                    static_cast<unsigned long long>(st->events_dropped));
    std::printf("target: events on (a queue takes them) >= 0.9 x off: one a message %s (%.2f); up to %zu a message "
                "%s (%.2f)\n",
                verdict(one_each >= 0.9), one_each, batch_events, verdict(ratio >= 0.9), ratio);
}

}  // namespace

void scenario_throughput(const context& cx) {
    if (cx.events) return throughput_with_events(cx);
    constexpr int rounds = 9;
    endpoint admin(cx.config);
    // The consumer's window (its consuming lane's prefetch), the same for the other two.
    const auto defaults = options_for(cx, "x");
    const std::uint16_t prefetch = defaults.effective_prefetch();
    std::vector<double> tarry_rates, raw_rates, pika_rates, c_rates;
    tarry::consumer_stats st;
    for (int r = 0; r < rounds; ++r) {
        tarry_rates.push_back(tarry_round(cx, admin, st));
        raw_rates.push_back(raw_round(cx, admin, prefetch));
        c_rates.push_back(rabbitmq_c_round(cx, admin, prefetch));
        pika_rates.push_back(pika_round(cx, admin, prefetch));
    }
    const double t = median(tarry_rates), w = median(raw_rates), p = median(pika_rates);
    std::printf("\n### T: throughput\n\n%zu jobs due now (no schedule header), published before consuming, "
                "no-op handler, 4 workers, the same prefetch for all three: %u; first delivery (first handler start "
                "for tarry) to last ack (last success for tarry); %d interleaved rounds. The ratio is the median "
                "of each round's tarry / raw (the raw loop runs right after tarry in every round, so both see "
                "the same machine); the ratio of the medians is given beside it.\n\n",
                throughput_jobs, prefetch, rounds);
    std::printf("| consumer | jobs/s (median) | rounds | vs raw |\n|---|---:|---|---:|\n");
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) ratios.push_back(tarry_rates[r] / raw_rates[r]);
    const double ratio = median(ratios);
    std::sort(ratios.begin(), ratios.end());
    std::printf("| tarry consumer | %.0f | %s | **%.2f** (rounds %.2f-%.2f; medians %.2f) |\n", t,
                rounds_text(tarry_rates).c_str(), ratio, ratios.front(), ratios.back(), t / w);
    std::printf("| raw consume + ack, tarry AMQP client | %.0f | %s | 1.00 |\n", w, rounds_text(raw_rates).c_str());
    std::printf("| rabbitmq-c 0.11 basic.consume + basic.ack (the C ceiling) | %.0f | %s | %.2f |\n", median(c_rates),
                rounds_text(c_rates).c_str(), median(c_rates) / w);
    std::printf("| pika 1.2 basic_consume + basic_ack | %.0f | %s | %.2f |\n", p, rounds_text(pika_rates).c_str(), p / w);
    std::printf("\nlast tarry round: received %llu, fast path %llu, succeeded %llu\n",
                static_cast<unsigned long long>(st.received), static_cast<unsigned long long>(st.fast_path),
                static_cast<unsigned long long>(st.succeeded));
    std::printf("target: tarry >= 0.9 x raw: %s (%.2f)\n", verdict(ratio >= 0.9), ratio);
    // Against the C ceiling, each round's own ratio (the rounds share the
    // machine's moments), then their median.
    std::vector<double> raw_vs_c, tarry_vs_c;
    for (int r = 0; r < rounds; ++r) {
        raw_vs_c.push_back(raw_rates[r] / c_rates[r]);
        tarry_vs_c.push_back(tarry_rates[r] / c_rates[r]);
    }
    const double raw_c = median(raw_vs_c), tarry_c = median(tarry_vs_c);
    std::printf("target: raw >= 1.0 x rabbitmq-c: %s (%.2f); tarry >= 0.9 x rabbitmq-c: %s (%.2f)\n",
                verdict(raw_c >= 1.0), raw_c, verdict(tarry_c >= 0.9), tarry_c);
}

namespace {

/// The members of the consumer's held job (lib/consumer/core/held_job.hpp:
/// held_job with its packed_message), for the delay_queue-alone figure.
struct held_like {
    std::uint64_t delivery_tag = 0;
    sys::time_point due{};
    std::unique_ptr<std::uint8_t[]> packed;  // 12-byte size header + encoded properties + body
    std::uint32_t incarnation = 0;
    std::uint32_t attempt = 1;
    std::uint32_t delivered_ms = 0;
    std::uint16_t lane = 0;
    bool redelivered = false;
};
constexpr std::size_t packed_header = 12;

std::size_t encoded_properties_size(const amqp::message& m) {
    std::vector<std::uint8_t> out;
    amqp::wire::byte_writer w(out);
    amqp::wire::encode_properties(w, m.properties);
    return out.size();
}

}  // namespace

void scenario_memory(const context& cx) {
    const std::size_t n = cx.held;
    std::mt19937_64 rng(20261122 + 2);
    std::uniform_int_distribution<long> within_ms(5 * 60 * 1000, 10 * 60 * 1000);
    std::vector<std::chrono::milliseconds> ahead(n);
    for (auto& a : ahead) a = std::chrono::milliseconds(within_ms(rng));

    // The delay queue alone, items shaped like held jobs.
    double queue_per_job = 0;
    std::size_t props_total = 0;
    {
        const auto now = to_micros(sys::now());
        std::vector<std::size_t> props(n);
        for (std::size_t i = 0; i < n; ++i)
            props[i] = encoded_properties_size(job_message("M" + std::to_string(i), now + ahead[i]));
        props_total = std::accumulate(props.begin(), props.end(), std::size_t{0});
        ::malloc_trim(0);
        const long before = rss_bytes();
        {
            tarry::delay_queue<held_like> q;
            for (std::size_t i = 0; i < n; ++i) {
                held_like h;
                h.delivery_tag = i + 1;
                const sys::time_point due = now + ahead[i];
                h.due = due;
                const std::size_t packed_size = packed_header + props[i] + body_bytes;
                h.packed = std::make_unique_for_overwrite<std::uint8_t[]>(packed_size);
                std::fill_n(h.packed.get(), packed_size, std::uint8_t{1});
                q.push(std::move(h), due, props[i] + body_bytes + 128);
            }
            queue_per_job = static_cast<double>(rss_bytes() - before) / n - static_cast<double>(body_bytes) -
                            static_cast<double>(props_total) / static_cast<double>(n);
        }
        ::malloc_trim(0);
    }

    // The consumer.
    endpoint admin(cx.config);
    auto opts = options_for(cx, fresh_queue_name("memory"));
    opts.max_held = 2 * n;
    opts.max_held_bytes = std::max(std::size_t{1} << 30, n * 4096);
    opts.prefetch = 0;
    declare_work_queue(admin, opts.queue);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    long before = 0, after = 0;
    double publish_s = 0, held_s = 0, stop_s = 0;
    tarry::consumer_stats st;
    bool all_held = false;
    run_log probes("Q");
    recovery_result recovery;
    auto config = cx.config;
    config.connection_name = "consumer-bench-M-" + std::to_string(::getpid());
    {
        tarry::consumer c(config, opts, [](const tarry::job&) { return tarry::job_outcome::success(); },
                          probes.hooks());
        c.start();
        confirmed_publisher pub(admin);
        ::malloc_trim(0);
        before = rss_bytes();
        const auto now = to_micros(sys::now());
        const auto p0 = steady::now();
        for (auto i : order) pub.publish(opts.queue, job_message("M" + std::to_string(i), now + ahead[i]));
        pub.wait_all();
        publish_s = seconds_since(p0);
        const auto deadline = steady::now() + 120s + std::chrono::seconds(n / 5000);
        while (steady::now() < deadline) {
            st = c.stats();
            if (st.held >= n) {
                all_held = true;
                break;
            }
            std::this_thread::sleep_for(20ms);
        }
        after = rss_bytes();
        held_s = seconds_since(p0);
        if (all_held) recovery = measure_recovery(cx, c, admin, opts.queue, config.connection_name, probes);
        const auto s0 = steady::now();
        c.stop();
        stop_s = seconds_since(s0);
    }
    // The jobs given back wait in the queue: a fresh consumer takes them.
    start_result fresh;
    if (all_held) fresh = measure_start(admin, config, opts, n);
    const auto d0 = steady::now();
    delete_queues(admin, opts);
    const double delete_s = seconds_since(d0);
    // What holding a job costs beyond what the broker sent (its body and
    // encoded properties, kept as they came): the goal is 128 B at 10^6.
    const double props_per_job = static_cast<double>(props_total) / static_cast<double>(n);
    const double per_job = static_cast<double>(after - before) / n - static_cast<double>(body_bytes) - props_per_job;
    std::printf("\n### M: memory per held job\n\n%zu jobs with %zu-byte bodies due 5-10 min ahead (random "
                "order), max_held %zu, max_held_bytes %zu MiB, derived lanes and prefetch (up to %zu lanes, "
                "prefetch %u); "
                "RSS from /proc/self/statm. Encoded properties (message_id + perform_job_at): %.1f "
                "bytes a job on average.\n\n",
                n, body_bytes, opts.max_held, opts.max_held_bytes >> 20, opts.effective_channels(),
                opts.effective_prefetch(),
                static_cast<double>(props_total) / n);
    std::printf("| what | held | RSS growth | per job beyond the body and its encoded properties | goal <= 128 B "
                "|\n|---|---:|---:|---:|---|\n");
    std::printf("| tarry consumer | %zu%s | %.1f MiB | %.1f B | %s |\n", st.held, all_held ? "" : " (TIMED OUT)",
                static_cast<double>(after - before) / (1 << 20), per_job, verdict(all_held && per_job <= 128));
    std::printf("| delay_queue alone, held-job-shaped items | %zu | %.1f MiB | %.1f B | |\n", n,
                (queue_per_job + body_bytes + props_per_job) * n / (1 << 20), queue_per_job);
    std::printf("\npublish + confirm %.1f s; all held %.1f s after publishing began; stop() (gives the held jobs "
                "back) %.1f s; deleting the queues afterwards %.1f s\n", publish_s, held_s, stop_s, delete_s);
    std::printf("consumer stats: held %zu, held_bytes %zu (%.1f a job), received %llu, parked %llu\n", st.held,
                st.held_bytes, st.held ? static_cast<double>(st.held_bytes) / static_cast<double>(st.held) : 0.0,
                static_cast<unsigned long long>(st.received), static_cast<unsigned long long>(st.parked));
    if (all_held) {
        print_recovery(recovery);
        print_start(fresh, n);
    }
}

}  // namespace cbench
