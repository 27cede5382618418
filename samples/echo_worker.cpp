// echo_worker: a scheduling consumer that prints every job event as one JSON
// object per line (stdout, flushed). Its command line is a public interface:
//
//   echo_worker (--url URL [--url URL ...] | --url-file PATH) --queue Q [--workers N]
//               [--hold-horizon-ms N] [--max-held N] [--default-delay-ms N] [--max-delay-ms N]
//               [--consumer-timeout-ms N] [--shutdown-grace-ms N]
//               [--retry-base-ms N] [--max-attempts N]
//               [--queue-type classic|quorum] [--no-declare] [--delivery-limit N] [--events [--events-per-message N]]
//               [--http HOST:PORT [--http-token TOKEN | --http-token-file PATH]]
//               [--async [--max-in-flight N]] [--systemd]
//
// --async runs the handler as a coroutine on the consumer's I/O thread
// (tarry/consumer/async_job_handler.hpp) instead of on --workers threads, at
// most --max-in-flight (default 1000) at once; x-echo-sleep-ms then waits on
// an Asio timer instead of sleeping a thread.
//
// --url may be given once per node of a cluster: the worker connects to the
// first that accepts, and after a loss fails over to the next (the URLs
// must agree on all but host and port).
//
// --queue-type declares the work queue, the wait queues and the dead-letter
// queue of that kind (default classic; every worker on a queue must agree);
// --no-declare declares none of them, only checks that each exists (for a
// topology set up by someone else: a declare with other arguments than the
// queue's own fails with 406). --delivery-limit N tells it the work queue's
// x-delivery-limit (a quorum queue's; it cannot be read over AMQP; 0: none):
// a job that arrives one return from it is replaced by a confirmed copy, and
// none is given back by a nack at the limit. Without it the limit is
// derived from the broker's version (20 from RabbitMQ 4.0 on, none before).
//
// Retries follow tarry's default policy (1 s doubling, equal jitter, 10
// attempts) unless --retry-base-ms sets an exponential one without jitter
// (N ms, doubling, capped at 1 h); --max-attempts bounds either (1 = no
// retries).
//
// --events publishes every job event to the `tarry.events` topic exchange
// too, with routing key `<event>.<queue>` and the body of its line
// (docs/events.md; best effort: dropped, and counted, when the broker
// pushes back). --events-per-message N (1 to 1000, default 1) lets up to N
// events of one kind that wait together leave in one message, its body a
// JSON array of their lines.
//
// --url-file PATH reads the broker's URLs from a file instead, one a line
// (blank lines and lines starting with # skipped), so that the password is
// not in the process list (a systemd credential, say).
//
// --systemd tells systemd how the worker is (Type=notify; the unit
// samples/systemd/tarry-worker@.service; README, "Run it as a service"):
// READY=1 once consuming, STATUS= with the held and running counts,
// WATCHDOG=1 every half of WATCHDOG_USEC while the consumer's I/O thread
// answers (none while it is stuck), and STOPPING=1 at SIGTERM. Outside
// systemd it sends nothing. Only in a build that found libsystemd-dev;
// elsewhere --systemd exits 2.
//
// --http serves tarry's HTTP endpoint for the queue (tarry/http/http_endpoint.hpp,
// docs/http.md): /metrics, /healthz, /readyz, /jobs, the page at /, and the
// publish gateway, which needs the token (--http-token-file reads it from a
// file, so that it is not visible in the process list). Port 0 picks a free
// port; the ready line then says which ("http":"127.0.0.1:PORT").
//
// Events: {"event":"ready","queue":Q} once consuming, always the first line
// (a job event that happens while start() returns waits for it), then per job
//   {"event":"run","queue":Q,"id":ID,"due":EPOCH_S,"at":EPOCH_S,"attempt":N}
// and likewise "succeeded", "parked" and "retry" (with "next_due"), "dead",
// "requeued", "dropped", "failed", "abandoned", "cancelled", "skipped" and
// "deduplicated" (with "reason"; a job cancelled while it ran:
// "cancel_requested":true, on "succeeded" too), and "scheduled" (a periodic
// occurrence's successor confirmed, with "next_due"). Every line
// is valid JSON (UTF-8): each byte of an id or reason that is not
// well-formed UTF-8 (a message_id may hold any bytes) is written \ufffd.
// Lines are written and flushed as the events happen: a reader that stops
// reading stdout blocks the worker's threads once the pipe is full (its
// jobs then start late). A message with integer header x-echo-fail = k
// fails on attempts ≤ k; one with x-echo-sleep-ms = n sleeps n ms in the
// handler (with --async, on a timer); one with x-echo-block-ms = n blocks
// the handler's thread n ms, which with --async is the consumer's I/O
// thread: a test's way to stall it (/healthz and the --systemd watchdog
// then go quiet). SIGTERM or SIGINT
// shuts down gracefully (running jobs finish, held jobs go back to the
// queue) and exits 0. Exit 1: could not start; 2: bad arguments.
#include "command_args.hpp"
#include "worker_http.hpp"
#ifdef TARRY_SAMPLE_SYSTEMD
#include "systemd_notifier.hpp"
#endif

#include "tarry/amqp/url.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/consumer/job_event_json.hpp"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

const char* const usage =
    "usage: echo_worker (--url URL [--url URL...] | --url-file PATH) --queue Q [--workers N] [--hold-horizon-ms N]\n"
    "                   [--max-held N]\n"
    "                   [--default-delay-ms N] [--max-delay-ms N] [--consumer-timeout-ms N]\n"
    "                   [--shutdown-grace-ms N] [--retry-base-ms N] [--max-attempts N]\n"
    "                   [--queue-type classic|quorum] [--no-declare] [--delivery-limit N] [--events [--events-per-message N]]\n"
    "                   [--http HOST:PORT [--http-token TOKEN | --http-token-file PATH]]\n"
    "                   [--async [--max-in-flight N]] [--systemd]\n";

// stdout: one line at a time, flushed. A job event that happens before the
// ready line is out (deliveries flow once the consumer consumes, before
// start() has returned here) waits for it, so that every run's output
// starts with its ready line.
class output {
public:
    void line(const std::string& text) {
        std::lock_guard lock(mutex_);
        write(text);
    }
    void event(const std::string& text) {
        std::lock_guard lock(mutex_);
        if (ready_)
            write(text);
        else
            early_.push_back(text);
    }
    /// The ready line, then the events that waited for it.
    void ready(const std::string& text) {
        std::lock_guard lock(mutex_);
        write(text);
        release_locked();
    }
    /// The events that waited, when no ready line will come (start failed).
    void release() {
        std::lock_guard lock(mutex_);
        release_locked();
    }

private:
    void release_locked() {
        ready_ = true;
        for (const auto& e : early_) write(e);
        early_.clear();
    }
    static void write(const std::string& text) {
        std::fputs(text.c_str(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
    }
    std::mutex mutex_;
    bool ready_ = false;
    std::vector<std::string> early_;
};

output out;

// An integer header, when it holds one.
std::optional<std::int64_t> int_header(const tarry::job& j, std::string_view name) {
    const auto* v = j.headers().find(name);
    return v ? tarry::amqp::wire::integer_of(*v) : std::nullopt;
}

// What x-echo-fail asks for on this attempt.
tarry::job_outcome fail_or_succeed(const tarry::job& j) {
    if (auto k = int_header(j, "x-echo-fail"); k && static_cast<std::int64_t>(j.attempt) <= *k)
        return tarry::job_outcome::failure("x-echo-fail: attempt " + std::to_string(j.attempt) +
                                           " of " + std::to_string(*k) + " fails");
    return tarry::job_outcome::success();
}

// x-echo-block-ms: blocks the thread the handler runs on.
void block_if_asked(const tarry::job& j) {
    if (auto ms = int_header(j, "x-echo-block-ms"); ms && *ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
}

tarry::job_outcome echo(const tarry::job& j) {
    block_if_asked(j);
    if (auto ms = int_header(j, "x-echo-sleep-ms"); ms && *ms > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(*ms));
    return fail_or_succeed(j);
}

// --async: the same, waiting on a timer instead of sleeping a thread.
boost::asio::awaitable<tarry::job_outcome> echo_async(const tarry::job& j) {
    block_if_asked(j);
    if (auto ms = int_header(j, "x-echo-sleep-ms"); ms && *ms > 0) {
        boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, std::chrono::milliseconds(*ms));
        co_await timer.async_wait(boost::asio::use_awaitable);
    }
    co_return fail_or_succeed(j);
}

// --url (once per node of a cluster), or --url-file: a file of URLs, one a
// line (blank lines and lines starting with # skipped), so that a password
// is not in the process list.
std::vector<std::string> broker_urls(cli::args& args) {
    std::vector<std::string> urls = args.all("--url");
    if (!args.has("--url-file")) {
        if (urls.empty()) args.fail("--url is required");
        return urls;
    }
    if (!urls.empty()) args.fail("give --url or --url-file, not both");
    std::istringstream lines(args.file_text("--url-file"));
    for (std::string line; std::getline(lines, line);) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && line.front() != '#') urls.push_back(line);
    }
    if (urls.empty()) args.fail("--url-file: no URL in the file");
    return urls;
}

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, usage, nullptr, {"--no-declare", "--events", "--async", "--systemd"});
    const std::vector<std::string> urls = broker_urls(args);
    tarry::subscription_options o;
    o.queue = args.required("--queue");
    o.workers = args.number("--workers", o.workers);
    o.hold_horizon = args.millis("--hold-horizon-ms", o.hold_horizon);
    o.max_held = args.number("--max-held", o.max_held);
    o.default_delay = args.millis("--default-delay-ms", o.default_delay);
    if (args.has("--max-delay-ms")) o.max_delay = args.millis("--max-delay-ms", {});
    o.broker_consumer_timeout = args.millis("--consumer-timeout-ms", o.broker_consumer_timeout);
    o.shutdown_grace = args.millis("--shutdown-grace-ms", o.shutdown_grace);
    if (args.has("--retry-base-ms"))
        o.retry = tarry::retry::backoff_policy::exponential(args.millis("--retry-base-ms", {}), 2.0,
                                                            std::chrono::hours(1));
    if (args.has("--max-attempts")) {
        const auto n = args.number("--max-attempts", 0);
        if (n == 0) args.fail("--max-attempts needs at least 1");
        o.retry = o.retry->with_max_attempts(static_cast<unsigned>(n));
    }
    o.queue_type = cli::queue_type_option(args);
    if (args.has("--delivery-limit")) {
        const auto n = args.number("--delivery-limit", 0);
        if (n > 0xffffffffu) args.fail("--delivery-limit is at most 4294967295");
        o.delivery_limit = static_cast<std::uint32_t>(n);
    }
    if (args.flag("--no-declare")) {
        o.declare_queue = false;
        o.declare_own_queues = false;
    }
    o.publish_events = args.flag("--events");
    if (args.has("--events-per-message")) {
        if (!o.publish_events) args.fail("--events-per-message needs --events");
        o.events_per_message = args.number("--events-per-message", 1);
        if (o.events_per_message == 0 || o.events_per_message > o.max_events_per_message)
            args.fail("--events-per-message is from 1 to " + std::to_string(o.max_events_per_message));
    }
    const bool async = args.flag("--async");
    if (args.has("--max-in-flight")) {
        if (!async) args.fail("--max-in-flight needs --async");
        o.max_in_flight = args.number("--max-in-flight", o.max_in_flight);
        if (o.max_in_flight == 0) args.fail("--max-in-flight needs at least 1");
    }
    const auto http = sample::http_options(args);
    const bool systemd = args.flag("--systemd");
#ifndef TARRY_SAMPLE_SYSTEMD
    if (systemd) args.fail("--systemd: this echo_worker was built without libsystemd (libsystemd-dev)");
#endif
    args.finish();

    const std::vector<std::string_view> url_views(urls.begin(), urls.end());
    const auto parsed = tarry::amqp::parse_urls(url_views);
    if (parsed.error) {
        std::fprintf(stderr, "echo_worker: bad --url: %s\n", parsed.detail.c_str());
        return 2;
    }
    // Signals are taken by sigwait below: block them before any thread starts.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

    tarry::consumer_hooks hooks;
    hooks.on_event = [queue = o.queue](const tarry::job_event& e) { out.event(tarry::to_json(e, queue)); };
    hooks.on_connection = [](const std::string& what) {
        std::fprintf(stderr, "echo_worker: connection %s\n", what.c_str());
    };
    try {
        std::optional<tarry::consumer> made;
        if (async) {
            made.emplace(parsed.config, o, echo_async, hooks);
        } else {
            made.emplace(parsed.config, o, echo, hooks);
        }
        tarry::consumer& worker = *made;
        worker.start();
        std::optional<sample::worker_http> endpoint;
        if (http) {
            endpoint.emplace(worker, parsed.config, *http);
            endpoint->start();
        }
        out.ready("{\"event\":\"ready\",\"queue\":" + tarry::json_quoted(o.queue) +
                   (endpoint ? ",\"http\":" + tarry::json_quoted(endpoint->address()) : std::string()) + "}");
#ifdef TARRY_SAMPLE_SYSTEMD
        std::optional<sample::systemd_notifier> notifier;
        if (systemd) notifier.emplace(worker).ready();
#endif
        int sig = 0;
        sigwait(&stop_signals, &sig);
        std::fprintf(stderr, "echo_worker: %s, shutting down\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
#ifdef TARRY_SAMPLE_SYSTEMD
        if (notifier) notifier->stopping();
#endif
        endpoint.reset();
        worker.stop();
        out.line("{\"event\":\"stopped\",\"queue\":" + tarry::json_quoted(o.queue) + "}");
    } catch (const std::exception& e) {
        out.release();
        std::fprintf(stderr, "echo_worker: %s\n", e.what());
        return 1;
    }
    return 0;
}
