// The consumer on an executor whose io_context several threads run:
// consumer.hpp promises that all its AMQP work happens there "in
// sequence", whatever runs the io_context. Deliveries, timers, publish
// confirms and a reconnect all happen at once here, on 4 threads; under
// ThreadSanitizer (suite tsan-consumer, scripts/sanitize) a core entered
// from two threads at once is reported.
#include "consumer_fixture.hpp"

#include "tarry/time/epoch_text.hpp"

#include <boost/asio/io_context.hpp>

#include <future>
#include <set>
#include <thread>

using namespace consumer_it;

namespace {
// Sanitized builds run several times slower: fewer jobs and more patience
// there (ThreadSanitizer reports a race among the first jobs as well).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr std::size_t job_count = 2000;
constexpr auto patience = 300s;
#else
constexpr std::size_t job_count = 10000;
constexpr auto patience = 60s;
#endif
}  // namespace

TEST_CASE("fault: 4 threads run the consumer's io_context: jobs with retries, parking and a connection cut each "
          "succeed, none early") {
    TARRY_REQUIRE_BROKER(url);
    const std::size_t n = job_count;
    auto relay = relay_to(url);
    auto o = options_for(unique_name("threads"));
    o.hold_horizon = 2s;                                                // the far tenth is parked
    o.retry = tarry::retry::backoff_policy::fixed(100ms).with_max_attempts(3);  // a tenth fails once
    event_log log;
    tarry::consumer_hooks hooks;
    hooks.on_event = [&](const job_event& e) { log.add(e); };
    boost::asio::io_context io;
    tarry::consumer worker(io.get_executor(), through(relay, url, 100ms), o,
                           [](const tarry::job& j) {
                               if (j.id().ends_with("7") && j.attempt == 1)
                                   return tarry::job_outcome::failure("fails once");
                               return tarry::job_outcome::success();
                           },
                           hooks);
    std::optional<std::error_code> run_result;
    bool stop_asked = false;
    worker.async_run([&](std::error_code ec) { run_result = ec; });
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) threads.emplace_back([&] { io.run(); });
    struct joiner {
        std::vector<std::thread>& ts;
        ~joiner() {
            for (auto& t : ts)
                if (t.joinable()) t.join();
        }
    } join_all{threads};
    struct stopper {  // a failed REQUIRE stops it, so that the threads end
        tarry::consumer& w;
        bool& asked;
        ~stopper() {
            if (!asked) w.async_stop([] {});
        }
    } stop_on_failure{worker, stop_asked};
    for (int i = 0; i < 1000 && !worker.health().consuming; ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(worker.health().consuming);

    // Due now, within the horizon (held), and beyond it (parked).
    const auto t0 = sys::now();
    std::vector<sys::time_point> dues;
    for (std::size_t i = 0; i < n; ++i)
        dues.push_back(i % 10 == 0 ? t0 + 6s : t0 + std::chrono::milliseconds(static_cast<int>(i % 1500)));
    const auto due_us = publish_many(url, o.queue, "t", dues);
    // Cut both connections while jobs are held, running, retried and parked.
    std::this_thread::sleep_for(700ms);
    relay.cut_all();

    const auto all_succeeded = [&](const std::vector<job_event>& es) {
        std::set<std::string> ids;
        for (const auto& e : es)
            if (e.what == kind::succeeded) ids.insert(e.id);
        return ids.size() >= n;
    };
    const bool done = log.wait_until(all_succeeded, patience);
    std::set<std::string> succeeded;
    for (const auto& e : log.of(kind::succeeded)) succeeded.insert(e.id);
    CHECK_MESSAGE(done, succeeded.size() << " of " << n << " jobs succeeded");
    for (const auto& r : log.of(kind::run)) {
        const auto due = due_us.find(r.id);
        REQUIRE(due != due_us.end());
        const auto at = tarry::epoch_microseconds(r.at);
        CHECK_MESSAGE(at >= due->second, r.id << " ran " << (due->second - at) << " us early");
    }
    CHECK(log.count(kind::retry) >= n / 10);
    // Far jobs that arrive within the horizon of their due time (a slow
    // publish) are held instead: most are parked.
    CHECK(log.count(kind::parked) >= n / 20);
    CHECK(log.count(kind::dead) == 0);
    CHECK(worker.stats().channel_losses >= 1);

    std::promise<void> stopped;
    stop_asked = true;
    worker.async_stop([&] { stopped.set_value(); });
    CHECK(stopped.get_future().wait_for(30s) == std::future_status::ready);
    for (auto& t : threads) t.join();
    REQUIRE(run_result);
    CHECK_FALSE(*run_result);
    connected_client c(url);
    cleanup(c, o);
}
