// soak_publish: the soak's publisher (scripts/soak). Publishes jobs to one
// queue at a steady rate, each at its own time (one every 1/rate s, never
// in bursts), with tarry's publisher (persistent, confirmed), and logs each
// job the broker confirmed.
//
//   soak_publish --url URL --queue Q --rate N --seconds N --log FILE
//                [--hold-horizon-ms N] [--seed N]
//
// Job n has message_id soak-<n> (n from 0), a 100-byte body, and a mix
// drawn from a fixed seed, so every run does the same work:
// - due: 30 % now; 40 % within the hold horizon (uniform, default 20 s);
//   30 % beyond it, up to three times it (parked, then held);
// - x-echo-fail: 84 % none, 10 % 1, 5 % 2 (retried), 1 % 1000 (failing on
//   every attempt: dead-lettered once the worker's attempts run out).
// The log gets `N DUE_EPOCH_S FAILS` per confirmed job (soak_events.hpp).
// At the end it waits (at most 60 s) for the last confirms and prints one
// line: published, confirmed, refused, and how far it fell behind its pace.
// Exit 0 when every job was confirmed; 1 otherwise; 2 on bad arguments.
#include "command_args.hpp"
#include "publish_job.hpp"
#include "soak_events.hpp"

#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/url.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <random>
#include <thread>

namespace {

const char* const usage =
    "usage: soak_publish --url URL --queue Q --rate N --seconds N --log FILE [--hold-horizon-ms N] [--seed N]\n";

using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Publishes still unconfirmed at which publishing waits (the broker is
/// then slower than the pace: it shows as falling behind).
constexpr std::uint64_t max_unconfirmed = 10'000;

struct job_mix {
    std::chrono::microseconds delay{0};
    std::uint32_t fails = 0;
};

job_mix draw(std::mt19937_64& rng, std::chrono::milliseconds horizon) {
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double h = static_cast<double>(std::chrono::duration_cast<std::chrono::microseconds>(horizon).count());
    job_mix m;
    const double when = unit(rng);
    if (when >= 0.7) {
        m.delay = std::chrono::microseconds(static_cast<std::int64_t>(h + unit(rng) * 2 * h));
    } else if (when >= 0.3) {
        m.delay = std::chrono::microseconds(static_cast<std::int64_t>(unit(rng) * h));
    }
    const double fate = unit(rng);
    if (fate >= 0.99) {
        m.fails = 1000;
    } else if (fate >= 0.94) {
        m.fails = 2;
    } else if (fate >= 0.84) {
        m.fails = 1;
    }
    return m;
}

/// What the confirms told, counted on the I/O thread, waited for by main.
struct tally {
    std::mutex mu;
    std::condition_variable cv;
    std::uint64_t confirmed = 0, refused = 0;
    std::string first_refusal;
};

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, usage);
    const auto config = cli::broker_of(args, args.required("--url"));
    const std::string queue = args.required("--queue");
    const std::size_t rate = args.number("--rate", 0);
    const std::size_t seconds = args.number("--seconds", 0);
    const std::string log_path = args.required("--log");
    const auto horizon = args.millis("--hold-horizon-ms", 20s);
    const std::size_t seed = args.number("--seed", 1);
    args.finish();
    if (rate == 0 || seconds == 0) args.fail("--rate and --seconds need at least 1");

    std::FILE* log = std::fopen(log_path.c_str(), "w");
    if (!log) {
        std::perror(log_path.c_str());
        return 1;
    }
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    tally t;
    std::uint64_t published = 0;
    double worst_lag_ms = 0;
    std::uint64_t lagging = 0;  // jobs published more than 10 ms after their time
    int status = 0;
    {
        tarry::amqp::connection conn(io.get_executor(), config);
        tarry::amqp::diagnostics why;
        if (conn.async_connect(why, boost::asio::use_future).get()) {
            std::fprintf(stderr, "soak_publish: cannot connect: %s\n", why.message.c_str());
            guard.reset();
            io.stop();
            io_thread.join();
            return 1;
        }
        tarry::publisher pub(conn);
        std::mt19937_64 rng(seed);
        const std::string body(100, 'x');
        const std::uint64_t total = static_cast<std::uint64_t>(rate) * seconds;
        const auto period = std::chrono::nanoseconds(1'000'000'000 / static_cast<std::int64_t>(rate));
        const auto t0 = steady::now();
        for (std::uint64_t n = 0; n < total; ++n) {
            const auto slot = t0 + period * static_cast<std::int64_t>(n);
            std::this_thread::sleep_until(slot);
            {
                std::unique_lock lock(t.mu);
                t.cv.wait(lock, [&] { return published - t.confirmed - t.refused < max_unconfirmed; });
            }
            const double lag_ms = std::chrono::duration<double, std::milli>(steady::now() - slot).count();
            worst_lag_ms = std::max(worst_lag_ms, lag_ms);
            if (lag_ms > 10) ++lagging;

            const job_mix m = draw(rng, horizon);
            const auto due = std::chrono::time_point_cast<std::chrono::microseconds>(tarry::wall_time::clock::now()) + m.delay;
            tarry::amqp::message msg(body);
            msg.properties.message_id = soak::job_id(n);
            if (m.fails > 0) {
                msg.properties.headers.emplace();
                msg.properties.headers->set("x-echo-fail", tarry::amqp::field_value{static_cast<std::int32_t>(m.fails)});
            }
            const soak::published_job record{n, due.time_since_epoch().count(), m.fails};
            {
                std::lock_guard lock(t.mu);
                ++published;
            }
            pub.async_publish("", queue, std::move(msg), tarry::job_schedule::at(due),
                              [&t, log, record](std::error_code ec) {
                                  std::lock_guard lock(t.mu);
                                  if (ec) {
                                      if (t.refused++ == 0) t.first_refusal = ec.message();
                                  } else {
                                      ++t.confirmed;
                                      std::fprintf(log, "%s\n", soak::published_line(record).c_str());
                                  }
                                  t.cv.notify_all();
                              });
        }
        const double took = std::chrono::duration<double>(steady::now() - t0).count();
        std::unique_lock lock(t.mu);
        const bool done = t.cv.wait_for(lock, 60s, [&] { return t.confirmed + t.refused == published; });
        std::printf("soak_publish: published %llu in %.1f s (%.1f jobs/s), confirmed %llu, refused %llu%s%s; "
                    "behind its pace at most %.1f ms, %llu jobs more than 10 ms behind\n",
                    static_cast<unsigned long long>(published), took, static_cast<double>(published) / took,
                    static_cast<unsigned long long>(t.confirmed), static_cast<unsigned long long>(t.refused),
                    t.refused ? ", first: " : "", t.first_refusal.c_str(), worst_lag_ms,
                    static_cast<unsigned long long>(lagging));
        if (!done) std::printf("soak_publish: %llu publishes unconfirmed after 60 s\n",
                               static_cast<unsigned long long>(published - t.confirmed - t.refused));
        status = done && t.refused == 0 ? 0 : 1;
        lock.unlock();
        conn.async_close(boost::asio::use_future).get();
    }
    guard.reset();
    io_thread.join();
    std::fclose(log);
    return status;
}
