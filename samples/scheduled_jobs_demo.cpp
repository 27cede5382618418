// scheduled_jobs_demo: tarry end to end against a real broker.
//
//   scheduled_jobs_demo --url AMQP_URL [--queue NAME]
//
// Starts a scheduling consumer (tarry::consumer), then publishes a handful
// of jobs with tarry::publisher (both on one io_context and its one
// thread), far-first and out of order, each with its
// own delay. One job fails twice and is retried with exponential backoff
// (400 ms, then 800 ms); one fails every time and ends in the dead-letter
// queue with its reason. Prints a timeline as it happens - when each job was
// published, held, run (with its lateness), retried, dead-lettered - and
// exits 0 when every job ended as expected and none started early.
// Messages already in the queue that the demo did not publish are handled
// like any other: run at once without a schedule, dead-lettered with a
// reason when their schedule is unreadable.
#include "command_args.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace {

using namespace std::chrono_literals;
using sys = std::chrono::system_clock;

struct job_spec {
    const char* id;
    std::chrono::milliseconds delay;
    int fail_times;  // fails on attempts 1..fail_times
};

// Published in this order: far-first, so near jobs must overtake them.
constexpr job_spec jobs[] = {
    {"report", 4000ms, 0},     {"cleanup", 6000ms, 0},  {"email", 1000ms, 0},
    {"flaky-import", 500ms, 2}, {"thumbnail", 2500ms, 0}, {"now", 0ms, 0},
    {"broken-export", 300ms, 99},
};
constexpr int job_count = sizeof jobs / sizeof jobs[0];

class timeline {
public:
    explicit timeline(sys::time_point start) : start_(start) {}
    template <class... Args>
    void print(const char* fmt, Args... args) {
        std::lock_guard lock(mutex_);
        std::printf("[+%6.3f s] ", seconds(sys::now()));
        std::printf(fmt, args...);
        std::printf("\n");
        std::fflush(stdout);
    }
    double seconds(sys::time_point t) const { return std::chrono::duration<double>(t - start_).count(); }

private:
    sys::time_point start_;
    std::mutex mutex_;
};

bool is_ours(const std::string& id) {
    for (const auto& j : jobs)
        if (id == j.id) return true;
    return false;
}

int fail_times_of(const tarry::job& j) {
    const auto* v = j.headers().find("x-demo-fail");
    const auto* n = v ? v->get_if<std::int32_t>() : nullptr;
    return n ? *n : 0;
}

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, "usage: scheduled_jobs_demo --url AMQP_URL [--queue NAME]\n");
    const std::string url = args.required("--url");
    const std::string queue = args.text("--queue", "tarry.demo." + std::to_string(::getpid()));
    args.finish();
    const auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) {
        std::fprintf(stderr, "scheduled_jobs_demo: bad --url: %s\n", parsed.detail.c_str());
        return 2;
    }

    const auto start = sys::now();
    timeline tl(start);
    std::atomic<int> finished{0}, early{0}, succeeded{0}, dead{0};

    tarry::subscription_options o;
    o.queue = queue;
    o.workers = 2;
    o.retry = tarry::retry::backoff_policy::exponential(400ms, 2.0, 5s).with_max_attempts(3);
    o.shutdown_grace = 2s;
    tarry::consumer_hooks hooks;
    hooks.on_event = [&](const tarry::job_event& e) {
        using k = tarry::job_event::kind;
        const double late_ms = std::chrono::duration<double, std::milli>(e.at - e.due).count();
        switch (e.what) {
            case k::run:
                if (e.at < e.due) ++early;
                tl.print("run       %-14s attempt %u, due +%.3f s, %.1f ms late", e.id.c_str(), e.attempt,
                         tl.seconds(e.due), late_ms);
                break;
            case k::succeeded:
                tl.print("done      %-14s acknowledged", e.id.c_str());
                if (is_ours(e.id)) {
                    ++succeeded;
                    ++finished;
                }
                break;
            case k::retry:
                tl.print("retry     %-14s attempt %u failed; attempt %u due +%.3f s", e.id.c_str(), e.attempt,
                         e.attempt + 1, tl.seconds(*e.next_due));
                break;
            case k::dead:
                tl.print("dead      %-14s %s", e.id.c_str(), e.reason.c_str());
                if (is_ours(e.id)) {
                    ++dead;
                    ++finished;
                }
                break;
            case k::parked:
                tl.print("parked    %-14s due +%.3f s", e.id.c_str(), tl.seconds(e.due));
                break;
            default:
                tl.print("%-9s %-14s %s", tarry::to_string(e.what), e.id.c_str(), e.reason.c_str());
        }
    };
    auto handler = [](const tarry::job& j) {
        if (static_cast<int>(j.attempt) <= fail_times_of(j))
            throw std::runtime_error("simulated failure on attempt " + std::to_string(j.attempt));
        return tarry::job_outcome::success();
    };

    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    int status = 0;
    try {
        // The consumer does its I/O on the same io_context as the publisher.
        tarry::consumer worker(io.get_executor(), parsed.config, o, handler, hooks);
        worker.start();
        std::printf("tarry demo: %d jobs on queue %s, published far-first\n", job_count, queue.c_str());
        {
            tarry::amqp::connection conn(io.get_executor(), parsed.config);
            if (conn.async_connect(boost::asio::use_future).get())
                throw std::runtime_error("cannot connect: " + conn.last_error().message);
            tarry::publisher pub(conn);
            for (const auto& j : jobs) {
                tarry::amqp::message m(std::string("payload of ") + j.id);
                m.properties.message_id = j.id;
                m.properties.headers = tarry::amqp::field_table{{"x-demo-fail", std::int32_t{j.fail_times}}};
                // "now" is due as it is published (its lateness is then the
                // consumer's, not the time it took to publish the jobs before it).
                const auto when = j.delay == 0ms ? sys::now() : start + j.delay;
                if (auto ec = pub.async_publish("", queue, std::move(m), tarry::job_schedule::at(when),
                                                boost::asio::use_future).get())
                    throw std::runtime_error(std::string("publish ") + j.id + ": " + ec.message());
                tl.print("published %-14s due +%.3f s (confirmed)", j.id, tl.seconds(when));
            }
            conn.async_close(boost::asio::use_future).wait_for(5s);
        }
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (finished < job_count && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
        worker.stop();
        std::printf("tarry demo: %d of %d jobs done, %d dead-lettered (as planned: 1), %d started early\n",
                    succeeded.load(), job_count - 1, dead.load(), early.load());
        status = succeeded == job_count - 1 && dead == 1 && early == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "scheduled_jobs_demo: %s\n", e.what());
        status = 1;
    }
    guard.reset();
    io_thread.join();
    return status;
}
