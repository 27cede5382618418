// A program outside the tarry tree, built against an installed tarry (with
// meson through pkg-config, and with CMake through find_package) by
// tests/install/run_install_test.sh. It consumes QUEUE, prints `ready` once
// it does, and exits 0 after one job ran: due at least a second after the
// consumer was ready (so it was held) and not started before that due
// time; 1 otherwise, or when none ran within TIMEOUT_S seconds.
//
//   consumer_app URL QUEUE TIMEOUT_S
#include "tarry/consumer/consumer.hpp"
#include "tarry/amqp/url.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: consumer_app URL QUEUE TIMEOUT_S\n");
        return 2;
    }
    const auto parsed = tarry::amqp::parse_url(argv[1]);
    if (parsed.error) {
        std::fprintf(stderr, "consumer_app: bad URL: %s\n", parsed.detail.c_str());
        return 2;
    }
    tarry::subscription_options options;
    options.queue = argv[2];

    std::mutex mutex;
    std::condition_variable ran;
    bool done = false;
    long long lateness_us = 0;
    tarry::wall_time due{};
    tarry::consumer worker(parsed.config, options, [&](const tarry::job& j) {
        std::lock_guard lock(mutex);
        lateness_us = std::chrono::duration_cast<std::chrono::microseconds>(j.lateness()).count();
        due = j.due;
        done = true;
        ran.notify_all();
        return tarry::job_outcome::success();
    });
    worker.start();
    const tarry::wall_time ready_at = std::chrono::system_clock::now();
    std::printf("ready\n");
    std::fflush(stdout);

    std::unique_lock lock(mutex);
    const bool in_time = ran.wait_for(lock, std::chrono::seconds(std::atoi(argv[3])), [&] { return done; });
    lock.unlock();
    worker.stop();
    if (!in_time) {
        std::fprintf(stderr, "consumer_app: no job ran within %s s\n", argv[3]);
        return 1;
    }
    const auto held = std::chrono::duration_cast<std::chrono::milliseconds>(due - ready_at).count();
    std::printf("ran: due %lld ms after ready, %lld us late\n", static_cast<long long>(held), lateness_us);
    if (lateness_us < 0) {
        std::fprintf(stderr, "consumer_app: the job started before its due time\n");
        return 1;
    }
    if (held < 1000) {
        std::fprintf(stderr, "consumer_app: the job was not delayed (due %lld ms after ready)\n",
                     static_cast<long long>(held));
        return 1;
    }
    return 0;
}
