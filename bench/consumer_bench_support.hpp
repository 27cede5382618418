// Shared pieces of bench/consumer_bench: a broker connection on its own I/O
// thread, confirmed raw publishes of jobs (perform_job_at as a double), fresh
// work queues deleted afterwards with the consumer's satellites, a log of the
// consumer's run events, percentiles, RSS, and a few report helpers.
#pragma once

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/consumer/consumer.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace cbench {

namespace amqp = tarry::amqp;
using sys = std::chrono::system_clock;
using steady = std::chrono::steady_clock;
using namespace std::chrono_literals;

/// Every job body in every scenario has this many bytes.
inline constexpr std::size_t body_bytes = 100;

/// What die() throws: a benchmark that fails unwinds, so what it started
/// (a cluster, worker processes) is stopped by its destructors.
struct failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};
[[noreturn]] void die(const std::string& what);
void check(std::error_code ec, const std::string& what);

/// What every scenario gets from main().
struct context {
    std::string url;
    amqp::connection_config config;
    std::string svg_dir;      ///< where plots go ("" = none)
    std::string source_root;  ///< for bench/pika_consume.py
    std::size_t channels = 0; ///< the consumer's lanes (0 = its default)
    /// --events: T compares the consumer with lifecycle events on and off
    /// instead of with the raw loop and pika.
    bool events = false;
    /// --held: how many jobs M holds (default 100 000; 1 000 000 for the
    /// "10^6 held" figures).
    std::size_t held = 100000;
    /// --publisher-parks: H publishes its far jobs through a publisher that
    /// parks them itself (publisher_options::park_beyond) instead of
    /// leaving them to the consumer.
    bool publisher_parks = false;
};

/// The broker of TARRY_TEST_AMQP_URL (scripts/run-bench sets it); dies
/// when it is unset or not an AMQP URL.
context context_from_env();
/// The value of `--name N` in argv, or `fallback`.
std::size_t number_arg(int argc, char** argv, const char* name, std::size_t fallback);

/// One connection on its own I/O thread, with one open channel.
struct endpoint {
    explicit endpoint(const amqp::connection_config& cfg);
    ~endpoint();
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;
    amqp::channel open_channel();

    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
    std::string server;  ///< "RabbitMQ 3.10.8" from the server properties
    amqp::connection conn;
    std::thread thread;
    amqp::channel ch;
};

/// A fresh queue name (pid, a random salt and a counter: no clash with
/// earlier runs or scenarios).
std::string fresh_queue_name(const std::string& what);
/// Declares `name` durable, as the consumer declares its work queue of that
/// kind (classic: no arguments; quorum: x-queue-type).
void declare_work_queue(endpoint& e, const std::string& name,
                        tarry::queue_kind kind = tarry::queue_kind::classic);
/// Deletes the work queue, its dead-letter queue and its wait queues.
void delete_queues(endpoint& e, const tarry::subscription_options& o);

/// Options every scenario starts from: the library's defaults, a short
/// shutdown grace.
tarry::subscription_options options_for(const context& cx, const std::string& queue);

/// A job message: message_id `id`, perform_job_at = due (epoch seconds as a
/// double) when given, a body of body_bytes.
amqp::message job_message(const std::string& id, std::optional<sys::time_point> due);
/// A 32-hex-digit id as the publisher makes them, from the seeded `rng`
/// (the same ids in every run).
std::string hex_id(std::mt19937_64& rng);
/// t rounded down to the microsecond (what a double epoch carries exactly).
sys::time_point to_micros(sys::time_point t);

/// Publishes on its own confirm channel, at most `window` unconfirmed.
class confirmed_publisher {
public:
    explicit confirmed_publisher(endpoint& e, std::size_t window = 2000);
    /// Waits (at most 60 s) for the confirms still due, without judging
    /// them: call wait_all() first to learn of refusals.
    ~confirmed_publisher();
    void publish(const std::string& queue, const amqp::message& m);
    /// Waits until every publish is confirmed; dies if one was refused or
    /// confirms stop coming for 60 s.
    void wait_all();

private:
    amqp::channel ch_;
    std::size_t window_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::size_t outstanding_ = 0;
    std::size_t failures_ = 0;
};

/// One handler start, from the consumer's `run` event.
struct run_record {
    std::size_t index = 0;  ///< the number after the id's prefix
    std::uint32_t attempt = 1;
    sys::time_point due;    ///< as the consumer read it
    sys::time_point at;     ///< when the handler started
};

/// The run and succeeded events of jobs whose message_id is prefix + number.
class run_log {
public:
    explicit run_log(std::string prefix) : prefix_(std::move(prefix)) {}
    void add(const tarry::job_event& e);
    tarry::consumer_hooks hooks();
    /// Waits until `n` runs (or `n` successes) were seen, at most `t`.
    bool wait_runs(std::size_t n, std::chrono::milliseconds t);
    bool wait_succeeded(std::size_t n, std::chrono::milliseconds t);
    std::vector<run_record> runs();
    std::size_t succeeded();
    sys::time_point last_success();

private:
    std::string prefix_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<run_record> runs_;
    std::size_t succeeded_ = 0;
    sys::time_point last_success_{};
};

/// Nearest-rank percentiles of a sample (ms or whatever unit it is in).
struct summary {
    std::size_t n = 0;
    double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
summary summarize(std::vector<double> v);
/// The median of interleaved rounds' figures: the middle one (upper middle
/// for an even count).
double median(std::vector<double> v);
/// Rounds' figures for a table cell: whole numbers joined by " · ".
std::string rounds_text(const std::vector<double>& v);

double ms_between(sys::time_point from, sys::time_point to);
double seconds_since(steady::time_point t0);
/// Resident set size of this process in bytes (/proc/self/statm).
long rss_bytes();
/// "met" / "MISSED".
const char* verdict(bool met);

/// Runs a shell command and returns what it printed; dies if it fails.
std::string run_command(const std::string& cmd);
/// The pids of the node's connections named exactly `name` (not its
/// " (copies)" connection), from rabbitmqctl list_connections on the node
/// of `dir`, through `broker` (scripts/broker).
std::vector<std::string> consuming_connections(const std::string& broker, const std::string& dir,
                                               const std::string& name);

}  // namespace cbench

namespace cbench {

// The scenarios, each printing its own section (consumer_bench_timing.cpp:
// L, H, R; consumer_bench_load.cpp: T, M).
void scenario_lateness(const context& cx);
void scenario_head_of_line(const context& cx, const std::vector<std::size_t>& far_counts);
void scenario_retry(const context& cx);
void scenario_throughput(const context& cx);
void scenario_memory(const context& cx);
// consumer_bench_async.cpp: A.
void scenario_async(const context& cx);
// consumer_bench_parking.cpp: P.
void scenario_parking(const context& cx);

}  // namespace cbench
