// The delay cascade beside holding in the client (bench/RESULTS.md, "Delay
// cascades"), in one run:
//
// 1. Lateness and hops: delays of 1 s, 10 s, 1 min, 10 min, 1 h, 6 h and
//    1 day, scaled so that one second is one millisecond (a binary cascade
//    of 17 levels of 1 ms: 1 day = 86 400 units, 86.4 s), `--per-delay`
//    messages each, published at once: through the cascade alone
//    (publisher::async_publish_delayed, received by a plain consumer), and
//    as jobs held by a tarry consumer (the same due times). Lateness is the
//    arrival (or run) less the due time, in ms of the scaled clock; hops are
//    the queues a message waited in (its x-death entries less the delivery
//    queue).
// 2. Publish rate: `--publishes` messages through the cascade (100 s delay,
//    deleted afterwards) beside the same number published straight to a
//    queue, and beside the cascade's routing key written by hand and
//    published to its entry exchange (the broker's routing alone), each
//    with confirms, alternating rounds.
// Needs TARRY_TEST_AMQP_URL (scripts/run-bench starts a broker).
//
//   cascade_bench [--per-delay N] [--publishes N] [--rounds N]
#include "cascade_setup.hpp"
#include "consumer_bench_support.hpp"

#include "tarry/publisher/publisher.hpp"

#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <map>

namespace {

using namespace cbench;
namespace parking = tarry::parking;
using boost::asio::use_future;

// The scaled delays: one second of the story is one millisecond here.
const std::vector<std::pair<const char*, std::int64_t>> story = {
    {"1 s", 1}, {"10 s", 10}, {"1 min", 60}, {"10 min", 600}, {"1 h", 3600}, {"6 h", 21600}, {"1 day", 86400}};

parking::cascade_spec bench_spec() {
    parking::cascade_spec s;
    s.levels = 17;  // 131 071 units
    s.unit = 1ms;
    s.prefix = fresh_queue_name("cascade");
    return s;
}

struct arrival {
    std::size_t index;
    sys::time_point at;
    std::size_t deaths;
};

std::size_t deaths_of(const amqp::message& m) {
    const auto* v = amqp::wire::header_of(m.properties, "x-death");
    const auto* a = v ? v->get_if<amqp::wire::field_array>() : nullptr;
    return a ? a->size() : 0;
}

void report(const char* how, const std::map<std::int64_t, std::vector<double>>& late,
            const std::map<std::int64_t, std::vector<double>>& hops) {
    for (const auto& [name, units] : story) {
        const auto s = summarize(late.at(units));
        std::printf("  %-6s %-7s  %5zu   %8.2f %8.2f %8.2f", how, name, s.n, s.p50, s.p99, s.max);
        if (const auto h = hops.find(units); h != hops.end()) std::printf("   %5.1f", summarize(h->second).max);
        std::printf("\n");
    }
}

void lateness(const context& cx, endpoint& e, std::size_t per_delay) {
    std::printf("\n1. lateness (ms of the scaled clock: 1 s = 1 ms) and hops; %zu messages per delay, all "
                "published at once\n  how    delay       n        p50      p99      max    hops\n",
                per_delay);
    const parking::delay_cascade cascade(bench_spec());
    declare_cascade(e, cascade);
    // Cascade alone: a plain consumer of the destination queue.
    const std::string q = fresh_queue_name("cascade-dest");
    declare_work_queue(e, q);
    std::mutex mu;
    std::vector<arrival> got;
    amqp::consumer_handlers h;
    h.on_delivery = [&](amqp::delivery d) {
        const auto at = sys::now();
        std::lock_guard lock(mu);
        got.push_back({std::stoul(std::string(d.msg.body.begin(), d.msg.body.end())), at, deaths_of(d.msg)});
    };
    auto ch = e.open_channel();
    amqp::consume_options co;
    co.queue = q;
    co.no_ack = true;
    auto [ce, tag] = ch.async_consume(co, std::move(h), use_future).get();
    check(ce, "consuming the destination");
    tarry::publisher_options po;
    po.delay_cascade = cascade.spec();
    tarry::publisher pub(e.conn, po);
    std::vector<sys::time_point> due;
    std::vector<std::int64_t> units_of;
    std::vector<std::future<std::error_code>> confirms;
    for (const auto& [name, units] : story)
        for (std::size_t k = 0; k < per_delay; ++k) {
            const auto index = due.size();
            due.push_back(sys::now() + std::chrono::milliseconds(units));
            units_of.push_back(units);
            confirms.push_back(pub.async_publish_delayed("", q, amqp::message(std::to_string(index)),
                                                         std::chrono::milliseconds(units), use_future));
        }
    for (auto& f : confirms) check(f.get(), "publishing into the cascade");
    const auto deadline = steady::now() + 150s;
    while (steady::now() < deadline) {
        {
            std::lock_guard lock(mu);
            if (got.size() >= due.size()) break;
        }
        std::this_thread::sleep_for(100ms);
    }
    std::map<std::int64_t, std::vector<double>> late, hops;
    {
        std::lock_guard lock(mu);
        if (got.size() != due.size()) die("cascade: " + std::to_string(got.size()) + " of " + std::to_string(due.size()) + " arrived");
        for (const auto& a : got) {
            late[units_of[a.index]].push_back(ms_between(due[a.index], a.at));
            hops[units_of[a.index]].push_back(static_cast<double>(a.deaths == 0 ? 0 : a.deaths - 1));
        }
    }
    report("cascade", late, hops);
    ch.async_close(use_future).wait();
    e.open_channel().async_delete_queue(q, {}, use_future).wait();
    delete_cascade(e, cascade, {q});

    // Held by a tarry consumer: the same due times, as jobs.
    const std::string work = fresh_queue_name("cascade-hold");
    auto o = options_for(cx, work);
    run_log log("h-");
    tarry::consumer worker(cx.config, o, [](const tarry::job&) { return tarry::job_outcome::success(); }, log.hooks());
    worker.start();
    std::vector<std::int64_t> held_units;
    {
        confirmed_publisher jobs(e);
        std::size_t i = 0;
        for (const auto& [name, units] : story)
            for (std::size_t k = 0; k < per_delay; ++k, ++i) {
                held_units.push_back(units);
                jobs.publish(work, job_message("h-" + std::to_string(i), to_micros(sys::now() + std::chrono::milliseconds(units))));
            }
        jobs.wait_all();
    }
    if (!log.wait_succeeded(held_units.size(), 150s)) die("hold: not every job ran");
    std::map<std::int64_t, std::vector<double>> held_late;
    for (const auto& r : log.runs()) held_late[held_units[r.index]].push_back(ms_between(r.due, r.at));
    report("held", held_late, {});
    worker.stop();
    delete_queues(e, o);
}

void publish_rate(endpoint& e, std::size_t n, std::size_t rounds) {
    std::printf("\n2. publish rate, %zu messages with confirms, %zu rounds alternating\n"
                "  round   direct/s     entry/s   cascade/s   cascade/direct   cascade/entry\n",
                n, rounds);
    const parking::delay_cascade cascade(bench_spec());
    declare_cascade(e, cascade);
    const std::string q = fresh_queue_name("cascade-rate");
    declare_work_queue(e, q);
    tarry::publisher_options po;
    po.delay_cascade = cascade.spec();
    tarry::publisher pub(e.conn, po);
    const auto body = amqp::message(std::string(body_bytes, 'x'));
    std::vector<double> ratios;
    for (std::size_t r = 0; r < rounds; ++r) {
        // direct: to the queue; entry: the cascade's key written by hand,
        // to its entry exchange (the broker's routing alone); cascade:
        // async_publish_delayed.
        enum class way { direct, entry, cascade };
        const auto key = cascade.route({"", q}, 100s, parking::unit_rounding::up)->routing_key;
        const auto timed = [&](way w) {
            std::vector<std::future<std::error_code>> confirms;
            confirms.reserve(n);
            const auto t0 = steady::now();
            for (std::size_t i = 0; i < n; ++i)
                confirms.push_back(w == way::cascade ? pub.async_publish_delayed("", q, body, 100s, use_future)
                                   : w == way::entry ? pub.async_publish_as_is(cascade.entry_exchange(), key, body, use_future)
                                                     : pub.async_publish_as_is("", q, body, use_future));
            for (auto& f : confirms) check(f.get(), "publishing");
            return static_cast<double>(n) / seconds_since(t0);
        };
        const double direct = timed(way::direct);
        const double entry = timed(way::entry);
        const double through = timed(way::cascade);
        ratios.push_back(through / direct);
        std::printf("  %5zu   %8.0f   %9.0f   %9.0f   %6.2f x   %6.2f x\n", r + 1, direct, entry, through,
                    through / direct, through / entry);
        e.open_channel().async_purge_queue(q, use_future).wait();
    }
    std::printf("  median cascade/direct: %.2f x\n", summarize(ratios).p50);
    e.open_channel().async_delete_queue(q, {}, use_future).wait();
    delete_cascade(e, cascade, {q});
}

}  // namespace

int main(int argc, char** argv) try {
    const context cx = context_from_env();
    endpoint broker(cx.config);
    std::printf("cascade_bench: %s, %u cores\n", broker.server.c_str(), std::thread::hardware_concurrency());
    lateness(cx, broker, number_arg(argc, argv, "--per-delay", 200));
    publish_rate(broker, number_arg(argc, argv, "--publishes", 20000), number_arg(argc, argv, "--rounds", 3));
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "cascade_bench: %s\n", e.what());
    return 1;
}
