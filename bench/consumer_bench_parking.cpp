// P: parking's throughput beside the broker's speed (bench/RESULTS.md,
// "P: parking"). 20 000 jobs due in an hour (beyond the hold horizon, so
// each is parked) wait in the queue before the consumer starts; jobs/s
// from its first `parked` event to the last, beside the bare park loop of
// raw_park_loop.hpp (first delivery to last ack) on the same queue size and
// prefetch, rounds interleaved. Goal: parking >= 0.8 x the loop.
#include "consumer_bench_support.hpp"
#include "raw_park_loop.hpp"

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <cstdio>
#include <future>
#include <limits>

namespace cbench {

namespace {

constexpr std::size_t park_jobs = 20000;

void prepublish_far(endpoint& admin, const std::string& queue, std::size_t n) {
    confirmed_publisher pub(admin);
    const auto due = sys::now() + 1h;
    for (std::size_t i = 0; i < n; ++i) pub.publish(queue, job_message("p" + std::to_string(i), due));
    pub.wait_all();
}

double tarry_parking_round(const context& cx, endpoint& admin) {
    const auto opts = options_for(cx, fresh_queue_name("parking"));
    declare_work_queue(admin, opts.queue);
    prepublish_far(admin, opts.queue, park_jobs);
    std::atomic<std::int64_t> first{std::numeric_limits<std::int64_t>::max()}, last{0};
    std::atomic<std::size_t> parked{0};
    std::promise<void> all;
    tarry::consumer_hooks hooks;
    hooks.on_event = [&](const tarry::job_event& e) {
        if (e.what != tarry::job_event::kind::parked) return;
        const std::int64_t at = steady::now().time_since_epoch().count();
        for (auto seen = first.load(); at < seen && !first.compare_exchange_weak(seen, at);) {
        }
        for (auto seen = last.load(); at > seen && !last.compare_exchange_weak(seen, at);) {
        }
        if (++parked == park_jobs) all.set_value();
    };
    bool finished = false;
    {
        tarry::consumer c(cx.config, opts, [](const tarry::job&) { return tarry::job_outcome::success(); }, hooks);
        c.start();
        finished = all.get_future().wait_for(120s) == std::future_status::ready;
        c.stop();
    }
    delete_queues(admin, opts);
    if (!finished) die("parking: the consumer did not park " + std::to_string(park_jobs) + " jobs in 120 s");
    return static_cast<double>(park_jobs) / std::chrono::duration<double>(steady::duration(last - first)).count();
}

double raw_parking_round(const context& cx, endpoint& admin, std::uint16_t prefetch) {
    const auto opts = options_for(cx, fresh_queue_name("parking-raw"));
    declare_work_queue(admin, opts.queue);
    const std::string to = opts.queue + ".park";
    declare_work_queue(admin, to);
    prepublish_far(admin, opts.queue, park_jobs);
    const double rate = raw_park_rate(cx.config, opts.queue, to, park_jobs, prefetch);
    delete_queues(admin, opts);
    admin.open_channel().async_delete_queue(to, {}, boost::asio::use_future).wait_for(30s);
    return rate;
}

}  // namespace

void scenario_parking(const context& cx) {
    constexpr int rounds = 5;
    endpoint admin(cx.config);
    const std::uint16_t prefetch = options_for(cx, "x").effective_prefetch();
    std::vector<double> tarry_rates, raw_rates, ratios;
    for (int r = 0; r < rounds; ++r) {
        tarry_rates.push_back(tarry_parking_round(cx, admin));
        raw_rates.push_back(raw_parking_round(cx, admin, prefetch));
        ratios.push_back(tarry_rates.back() / raw_rates.back());
    }
    std::printf("\n### P: parking\n\n%zu jobs due in an hour (beyond the hold horizon), published before consuming; "
                "tarry: first to last `parked` event (its copy confirmed, the delivery acked); the raw park loop: "
                "first delivery to last ack (consume, publish the copy on a second connection's confirm channel, "
                "ack once confirmed); prefetch %u for both; %d interleaved rounds.\n\n",
                park_jobs, prefetch, rounds);
    std::printf("| parking | jobs/s (median) | rounds | vs the loop |\n|---|---:|---|---:|\n");
    const double ratio = median(ratios);
    std::printf("| tarry consumer (wait ladder) | %.0f | %s | **%.2f** (median of the rounds' ratios) |\n",
                median(tarry_rates), rounds_text(tarry_rates).c_str(), ratio);
    std::printf("| raw park loop, tarry AMQP client | %.0f | %s | 1.00 |\n", median(raw_rates),
                rounds_text(raw_rates).c_str());
    std::printf("target: parking >= 0.8 x the raw park loop: %s (%.2f)\n", verdict(ratio >= 0.8), ratio);
}

}  // namespace cbench
