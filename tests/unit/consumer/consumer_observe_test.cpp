// What a consumer shows of itself with no broker at all: before start()
// (and after a stop() of one never started) its health says so, its
// metrics are empty, async_ping completes rather than hangs, held_jobs()
// refuses a string that is no cursor, and wait_queues() names the ladder.
// With a broker: tests/integration/consumer_metrics_test.cpp.
#include "tarry/consumer/consumer.hpp"

#include <doctest/doctest.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // Asio's coroutine frames (a GCC 12 false positive)
#endif

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <chrono>
#include <future>

using namespace std::chrono_literals;

namespace {
tarry::subscription_options options() {
    tarry::subscription_options o;
    o.queue = "jobs";
    o.hold_horizon = std::chrono::seconds(10);
    o.min_park_ttl = std::chrono::seconds(1);
    return o;
}
tarry::job_outcome succeed(const tarry::job&) { return tarry::job_outcome::success(); }
}  // namespace

TEST_CASE("not started: health says so, metrics are empty, no held job") {
    tarry::consumer c(tarry::amqp::connection_config{}, options(), succeed);
    const auto h = c.health();
    CHECK_FALSE(h.ready());
    CHECK_FALSE(h.consuming);
    CHECK(h.reason == "not started");
    const auto m = c.metrics();
    CHECK_FALSE(m.connected);
    CHECK_FALSE(m.next_due);
    CHECK_FALSE(m.oldest_unacked_age);
    CHECK(m.recent_dead_letters.empty());
    CHECK(m.start_lateness.count == 0);
    CHECK(m.start_lateness.counts.size() == tarry::start_lateness_bounds().size() + 1);
    CHECK(m.handler_duration.bounds.size() == tarry::handler_duration_bounds().size());
    std::error_code ec;
    const auto page = c.held_jobs(10, "", ec);
    CHECK_FALSE(ec);
    CHECK(page.jobs.empty());
    CHECK_FALSE(page.next);
    CHECK(page.held == 0);
    c.held_jobs(10, "no cursor at all", ec);
    CHECK(ec == std::errc::invalid_argument);
}

TEST_CASE("wait_queues: the parking ladder's queues, shortest TTL first") {
    tarry::consumer c(tarry::amqp::connection_config{}, options(), succeed);
    CHECK(c.wait_queues() == std::vector<std::string>{"jobs.wait.1000", "jobs.wait.2000", "jobs.wait.4000",
                                                       "jobs.wait.8000"});
}

TEST_CASE("async_ping with the consumer's own I/O thread: before start and after stop it completes, never hangs") {
    tarry::consumer c(tarry::amqp::connection_config{}, options(), succeed);
    auto before = c.async_ping(boost::asio::use_future);
    REQUIRE(before.wait_for(5s) == std::future_status::ready);
    c.stop();  // never started: nothing to stop
    auto after = c.async_ping(boost::asio::use_future);
    REQUIRE(after.wait_for(5s) == std::future_status::ready);
    CHECK(c.health().reason == "not started");
}

TEST_CASE("async_ping on a caller's executor: completes once that executor has run it") {
    boost::asio::io_context io;
    tarry::consumer c(io.get_executor(), tarry::amqp::connection_config{}, options(), succeed);
    bool answered = false;
    bool on_io = false;
    c.async_ping(boost::asio::bind_executor(io, [&] {
        answered = true;
        on_io = io.get_executor().running_in_this_thread();
    }));
    CHECK_FALSE(answered);  // never inline
    io.run_for(2s);
    CHECK(answered);
    CHECK(on_io);
}

TEST_CASE("an asynchronous handler: the consumer runs coroutines (options().handlers); an empty one, or "
          "max_in_flight 0, is refused at construction") {
    const tarry::async_job_handler coroutine = [](const tarry::job&) -> boost::asio::awaitable<tarry::job_outcome> {
        co_return tarry::job_outcome::success();
    };
    tarry::consumer c(tarry::amqp::connection_config{}, options(), coroutine);
    CHECK(c.options().handlers == tarry::handler_kind::coroutines);
    CHECK(c.options().capacity() == 1000);
    tarry::consumer threads(tarry::amqp::connection_config{}, options(), succeed);
    CHECK(threads.options().handlers == tarry::handler_kind::threads);
    const auto refused = [](auto make) {
        try {
            make();
        } catch (const std::system_error& e) {
            return e.code() == std::errc::invalid_argument;
        }
        return false;
    };
    CHECK(refused([] { tarry::consumer x(tarry::amqp::connection_config{}, options(), tarry::async_job_handler{}); }));
    auto none_in_flight = options();
    none_in_flight.max_in_flight = 0;
    CHECK(refused([&] { tarry::consumer x(tarry::amqp::connection_config{}, none_in_flight, coroutine); }));
}
