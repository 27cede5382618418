// scheduled_jobs_demo: tarry's layers working together against a real broker.
//
//   scheduled_jobs_demo --url AMQP_URL [--queue NAME]
//
// Publishes a handful of jobs out of order, each with a `perform_job_at`
// header (epoch seconds, an AMQP double), consumes them with manual acks,
// holds every delivery unacknowledged in a delay_queue keyed by its due
// time, and lets a worker_pool run each one when it is due. One job fails
// twice and is retried in place with exponential backoff. Prints a timeline
// as it happens; exits 0 when every job ran on time and was acknowledged.
//
// (The scheduling consumer, parking and broker-side retries are built on
// these same pieces; this sample shows the pieces themselves.)
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/url.hpp"
#include "tarry/retry/backoff.hpp"
#include "tarry/schedule/delay_queue.hpp"
#include "tarry/schedule/worker_pool.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
using sys_clock = std::chrono::system_clock;
namespace amqp = tarry::amqp;

struct job_spec {
    const char* id;
    double delay_s;
    int fail_times;  // fails on attempts 1..fail_times
};

// Published in this order: far-first, so a near job must overtake them.
constexpr job_spec jobs[] = {
    {"report", 4.0, 0}, {"cleanup", 6.0, 0}, {"email", 1.0, 0},
    {"flaky-import", 0.5, 2}, {"thumbnail", 2.5, 0}, {"now", 0.0, 0},
};
constexpr int job_count = sizeof jobs / sizeof jobs[0];

struct held_job {
    std::string id;
    std::uint64_t delivery_tag = 0;
    double due_epoch = 0;
    int fail_times = 0;
    unsigned attempt = 1;
    tarry::retry::duration previous_delay{0};
};

double epoch_seconds(sys_clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

class timeline {
public:
    explicit timeline(double start_epoch) : start_(start_epoch) {}
    template <class... Args>
    void print(const char* fmt, Args... args) {
        std::lock_guard lock(mutex_);
        std::printf("[+%6.3f s] ", epoch_seconds(sys_clock::now()) - start_);
        std::printf(fmt, args...);
        std::printf("\n");
        std::fflush(stdout);
    }
    double since_start(double epoch) const { return epoch - start_; }

private:
    double start_;
    std::mutex mutex_;
};

[[noreturn]] void fail(const std::string& what, std::error_code ec, const std::string& detail = {}) {
    std::fprintf(stderr, "scheduled_jobs_demo: %s: %s%s%s\n", what.c_str(), ec.message().c_str(),
                 detail.empty() ? "" : " - ", detail.c_str());
    std::exit(1);
}

void check(const std::string& what, std::error_code ec, const amqp::channel& ch) {
    if (ec) fail(what, ec, ch.last_error().message);
}

// perform_job_at as the demo's own publisher sends it (a double); throws
// std::runtime_error for anything else.
double due_of(const amqp::message& m) {
    const auto& headers = m.properties.headers;
    const amqp::field_value* v = headers ? headers->find("perform_job_at") : nullptr;
    if (const double* d = v ? v->get_if<double>() : nullptr) return *d;
    throw std::runtime_error("message without a double perform_job_at");
}

}  // namespace

int main(int argc, char** argv) {
    std::string url, queue = "tarry.demo." + std::to_string(::getpid());
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--url") && i + 1 < argc) url = argv[++i];
        else if (!std::strcmp(argv[i], "--queue") && i + 1 < argc) queue = argv[++i];
        else {
            std::fprintf(stderr, "usage: scheduled_jobs_demo --url AMQP_URL [--queue NAME]\n");
            return 2;
        }
    }
    if (url.empty()) {
        std::fprintf(stderr, "usage: scheduled_jobs_demo --url AMQP_URL [--queue NAME]\n");
        return 2;
    }
    auto parsed = amqp::parse_url(url);
    if (parsed.error) fail("bad --url", parsed.error, parsed.detail);

    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });

    amqp::connection conn(io.get_executor(), parsed.config);
    if (auto ec = conn.async_connect(boost::asio::use_future).get())
        fail("connect to " + amqp::to_redacted_url(parsed.config), ec, conn.last_error().message);
    auto [ec_open, ch] = conn.async_open_channel(boost::asio::use_future).get();
    if (ec_open) fail("open channel", ec_open, conn.last_error().message);
    auto [ec_pub_open, pub] = conn.async_open_channel(boost::asio::use_future).get();
    if (ec_pub_open) fail("open channel", ec_pub_open, conn.last_error().message);

    amqp::queue_options q;
    q.name = queue;
    q.auto_delete = true;
    check("declare queue", std::get<0>(ch.async_declare_queue(q, boost::asio::use_future).get()), ch);
    check("confirm.select", pub.async_confirm_select(boost::asio::use_future).get(), pub);

    const auto start = sys_clock::now();
    timeline tl(epoch_seconds(start));
    std::printf("tarry demo: %d jobs on queue %s, published far-first\n", job_count, queue.c_str());

    for (const auto& j : jobs) {
        amqp::basic_properties p;
        p.message_id = j.id;
        p.delivery_mode = 2;
        p.headers = amqp::field_table{
            {"perform_job_at", epoch_seconds(start) + j.delay_s},
            {"x-demo-fail", static_cast<std::int32_t>(j.fail_times)},
        };
        amqp::message m(std::string("payload of ") + j.id, p);
        check("publish", pub.async_publish("", queue, m, {}, boost::asio::use_future).get(), pub);
        tl.print("published %-13s due at +%.3f s (confirmed)", j.id, j.delay_s);
    }

    tarry::delay_queue<held_job> held;
    std::atomic<int> done{0};
    std::atomic<int> early{0};
    auto policy = tarry::retry::backoff_policy::exponential(400ms, 2.0, 5s).with_max_attempts(5);
    auto random = tarry::retry::make_random_source(1);
    std::mutex random_mutex;

    auto run = [&](tarry::due_item<held_job>& it) {
        held_job& j = it.value;
        const double now = epoch_seconds(sys_clock::now());
        if (now < j.due_epoch) early++;
        tl.print("run       %-13s attempt %u, due +%.3f s, late %.1f ms", j.id.c_str(), j.attempt,
                 tl.since_start(j.due_epoch), (now - j.due_epoch) * 1000.0);
        if (static_cast<int>(j.attempt) <= j.fail_times)
            throw std::runtime_error("simulated failure on attempt " + std::to_string(j.attempt));
        ch.async_ack(j.delivery_tag, false, [&, id = j.id](std::error_code ec) {
            if (ec) fail("ack " + id, ec, ch.last_error().message);
            tl.print("acked     %s", id.c_str());
            done++;
        });
    };
    auto on_error = [&](tarry::due_item<held_job>& it, std::exception_ptr e) {
        held_job j = std::move(it.value);
        tarry::retry::retry_decision d;
        {
            std::lock_guard lock(random_mutex);
            d = tarry::retry::decide(policy, j.attempt, 0ms, j.previous_delay, random);
        }
        if (!d.retry) {
            tl.print("gave up   %s: %s", j.id.c_str(), d.reason.c_str());
            ch.async_nack(j.delivery_tag, false, false, [](std::error_code) {});
            done++;
            return;
        }
        const auto next = sys_clock::now() + d.delay;
        tl.print("failed    %-13s (%s); retry in %lld ms", j.id.c_str(),
                 tarry::exception_text(e).c_str(), static_cast<long long>(d.delay.count()));
        j.attempt++;
        j.previous_delay = d.delay;
        j.due_epoch = epoch_seconds(next);
        held.push(std::move(j), next);
    };
    tarry::worker_pool<held_job> workers(held, 2, run, on_error);

    check("qos", ch.async_qos({.prefetch_count = 100}, boost::asio::use_future).get(), ch);
    amqp::consume_options c;
    c.queue = queue;
    amqp::consumer_handlers handlers;
    handlers.on_delivery = [&](amqp::delivery d) {
        held_job j;
        j.id = d.msg.properties.message_id.value_or("?");
        j.delivery_tag = d.delivery_tag;
        try {
            j.due_epoch = due_of(d.msg);
        } catch (const std::exception& e) {
            // Not one of ours: refuse it (never run, never requeued forever).
            tl.print("rejected  %-13s %s", j.id.c_str(), e.what());
            ch.async_reject(d.delivery_tag, false, [](std::error_code) {});
            return;
        }
        if (auto* f = d.msg.properties.headers->find("x-demo-fail"))
            if (auto* n = f->get_if<std::int32_t>()) j.fail_times = *n;
        const auto due = sys_clock::time_point(std::chrono::duration_cast<sys_clock::duration>(
            std::chrono::duration<double>(j.due_epoch)));
        tl.print("holding   %-13s unacked, due +%.3f s", j.id.c_str(), tl.since_start(j.due_epoch));
        held.push(std::move(j), due);
    };
    auto [ec_consume, tag] = ch.async_consume(c, handlers, boost::asio::use_future).get();
    check("consume", ec_consume, ch);

    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (done < job_count && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(20ms);
    workers.stop(2s);
    conn.async_close(boost::asio::use_future).get();
    guard.reset();
    io_thread.join();

    std::printf("tarry demo: %d of %d jobs done, %d started early\n", done.load(), job_count,
                early.load());
    return done == job_count && early == 0 ? 0 : 1;
}
