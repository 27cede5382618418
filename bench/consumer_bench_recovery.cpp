// M's recovery figures: with every job held, the broker closes the
// consumer's consuming connection (rabbitmqctl close_connection on the
// private node of TARRY_TEST_BROKER_DIR). The broker requeues what the
// connection held; the consumer reconnects and takes it all again. Probe
// jobs due every 25 ms from 1 s after the cut, published (and held) before
// it, show the longest stall of jobs that fall due meanwhile: handler start
// − due, from the consumer's `run` events.
#include "consumer_bench_recovery.hpp"

#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace cbench {

namespace {

constexpr std::size_t probe_count = 2000;
constexpr auto probe_first = 1s;
constexpr auto probe_step = 25ms;

}  // namespace

recovery_result measure_recovery(const context& cx, tarry::consumer& c, endpoint& admin, const std::string& queue,
                                 const std::string& connection_name, run_log& probes) {
    recovery_result r;
    const char* dir = std::getenv("TARRY_TEST_BROKER_DIR");
    if (dir == nullptr || *dir == '\0') {
        r.skipped = "no private broker (TARRY_TEST_BROKER_DIR unset: run under scripts/with-broker)";
        return r;
    }
    const std::string broker = cx.source_root + "/scripts/broker";
    const auto base = c.stats();
    r.held_before = base.held;

    // The probes, held before the cut.
    const auto t_cut_planned = to_micros(sys::now() + 10s);
    {
        confirmed_publisher pub(admin);
        for (std::size_t i = 0; i < probe_count; ++i)
            pub.publish(queue, job_message("Q" + std::to_string(i), t_cut_planned + probe_first + i * probe_step));
        pub.wait_all();
    }
    while (c.stats().held < base.held + probe_count && sys::now() < t_cut_planned) std::this_thread::sleep_for(10ms);
    if (c.stats().held < base.held + probe_count) {
        r.skipped = "the probes were not all held 10 s after publishing";
        return r;
    }
    std::this_thread::sleep_until(t_cut_planned);

    const auto pids = consuming_connections(broker, dir, connection_name);
    if (pids.empty()) {
        r.skipped = "no connection named '" + connection_name + "' on the broker";
        return r;
    }
    const auto before_cut = c.stats();
    const auto cut = steady::now();
    for (const auto& pid : pids) run_command(broker + " ctl " + dir + " close_connection '" + pid + "' 'bench cuts'");
    r.close_s = seconds_since(cut);
    r.connections_closed = pids.size();

    const auto deadline = cut + 600s;
    bool consuming = false;
    while (steady::now() < deadline) {
        const auto st = c.stats();
        if (!consuming && st.received > before_cut.received) {
            consuming = true;
            r.consuming_again_s = seconds_since(cut);
        }
        if (consuming && st.held + st.succeeded - before_cut.succeeded >= before_cut.held) {
            r.all_held_again_s = seconds_since(cut);
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    r.recovered = r.all_held_again_s > 0;
    probes.wait_runs(probe_count, 120s);
    const auto after = c.stats();
    r.channel_losses = after.channel_losses - before_cut.channel_losses;
    r.dropped = after.dropped - before_cut.dropped;
    std::vector<double> lateness;
    for (const auto& run : probes.runs())
        if (run.attempt == 1) lateness.push_back(ms_between(run.due, run.at));
    r.probes_run = lateness.size();
    r.probe_lateness = summarize(lateness);
    return r;
}

void print_recovery(const recovery_result& r) {
    std::printf("\n#### Recovery: the consuming connection closed with every job held\n\n");
    if (!r.skipped.empty()) {
        std::printf("not measured: %s\n", r.skipped.c_str());
        return;
    }
    std::printf("%zu probe jobs due every %lld ms from %lld s after the cut, held before it; the broker closed "
                "%zu consuming connection(s) (rabbitmqctl close_connection, %.1f s).\n\n",
                probe_count, static_cast<long long>(probe_step.count()),
                static_cast<long long>(std::chrono::seconds(probe_first).count()), r.connections_closed, r.close_s);
    std::printf("| held at the cut | consuming again | all held again | channels lost | dropped | probes run | "
                "probe lateness p50 / p99 / max (the longest stall) |\n|---:|---:|---:|---:|---:|---:|---|\n");
    std::printf("| %zu | %.2f s | %s | %llu | %llu | %zu / %zu | %.1f / %.1f / %.1f ms |\n", r.held_before,
                r.consuming_again_s,
                r.recovered ? (std::to_string(r.all_held_again_s).substr(0, 6) + " s").c_str() : "not in 600 s",
                static_cast<unsigned long long>(r.channel_losses), static_cast<unsigned long long>(r.dropped),
                r.probes_run, probe_count, r.probe_lateness.p50, r.probe_lateness.p99, r.probe_lateness.max);
}

start_result measure_start(endpoint& admin, const amqp::connection_config& config,
                           const tarry::subscription_options& opts, std::size_t expected) {
    start_result r;
    const auto q0 = steady::now();
    while (steady::now() < q0 + 300s) {
        amqp::queue_options q;
        q.name = opts.queue;
        q.passive = true;
        auto [ec, info] = admin.ch.async_declare_queue(q, boost::asio::use_future).get();
        check(ec, "counting " + opts.queue);
        if (info.message_count >= expected) break;
        std::this_thread::sleep_for(100ms);
    }
    r.requeued_s = seconds_since(q0);
    tarry::consumer c(config, opts, [](const tarry::job&) { return tarry::job_outcome::success(); });
    const auto t0 = steady::now();
    c.start();
    const auto deadline = t0 + 600s;
    while (steady::now() < deadline) {
        const auto st = c.stats();
        if (r.first_taken_s == 0 && st.received > 0) r.first_taken_s = seconds_since(t0);
        if (st.held >= expected) {
            r.all_held = true;
            r.all_held_s = seconds_since(t0);
            break;
        }
        std::this_thread::sleep_for(5ms);
    }
    const auto s0 = steady::now();
    c.stop();
    r.stop_s = seconds_since(s0);
    return r;
}

void print_start(const start_result& r, std::size_t expected) {
    std::printf("\n#### Start: a fresh consumer on the %zu jobs given back\n\n", expected);
    std::printf("| all ready in the queue again (before the start) | first job taken | all held | stop(), giving them "
                "back |\n|---:|---:|---:|---:|\n");
    std::printf("| %.1f s | %.2f s | %s | %.1f s |\n", r.requeued_s, r.first_taken_s,
                r.all_held ? (std::to_string(r.all_held_s).substr(0, 6) + " s").c_str() : "not in 600 s", r.stop_s);
}

}  // namespace cbench
