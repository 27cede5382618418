// echo_worker as a child process, for the tests that drive the samples
// against the real broker: what it printed, parsed; signals by its pid only;
// and a guard that deletes a worker's queues when a test ends.
#pragma once

#include "consumer_fixture.hpp"
#include "json_line.hpp"
#include "process.hpp"

#include <csignal>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <set>

namespace consumer_it {

using tarry_test::child_process;
using steady = std::chrono::steady_clock;

inline std::string build_root() { return tarry_test::env("TARRY_BUILD_ROOT").value_or("."); }
inline std::string echo_worker_path() { return build_root() + "/samples/echo_worker"; }

inline std::int64_t micros(sys::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

/// Microseconds since the epoch of a due time written as perform_job_at
/// (a double of epoch seconds): the nearest microsecond.
inline std::int64_t micros_of_double(double epoch_s) { return std::llround(epoch_s * 1e6); }

/// A directory of a test's own under the build tree, emptied first and kept
/// after the run (files a worker reads, a screenshot left to look at).
inline std::filesystem::path output_dir(const std::string& name) {
    const auto d = std::filesystem::path(build_root()) / "test-output" / name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

/// One line of a worker's stdout.
struct worker_event {
    std::string raw;
    json_line::fields f;  ///< empty when the line is not a flat JSON object

    std::string what() const { return field("event"); }
    std::string id() const { return field("id"); }
    std::string field(const std::string& name) const {
        auto it = f.find(name);
        return it == f.end() ? std::string() : it->second;
    }
    /// An epoch-seconds member in microseconds (-1 when absent or malformed).
    std::int64_t micros_of(const std::string& name) const {
        auto it = f.find(name);
        if (it == f.end()) return -1;
        return json_line::epoch_micros(it->second).value_or(-1);
    }
    std::int64_t due() const { return micros_of("due"); }
    std::int64_t at() const { return micros_of("at"); }
};

/// An echo_worker child and everything it printed so far.
class worker_process {
public:
    worker_process(const std::string& url, const std::string& queue, std::vector<std::string> extra = {})
        : p_(argv(url, queue, std::move(extra))) {}
    /// An echo_worker with exactly these arguments (after the program).
    explicit worker_process(std::vector<std::string> args) : p_(with_program(std::move(args))) {}

    /// Reads stdout until pred() holds, the output ends, or `t` passes;
    /// whether pred() holds.
    bool read_until(const std::function<bool()>& pred, std::chrono::milliseconds t) {
        const auto deadline = steady::now() + t;
        while (!pred()) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady::now());
            if (left.count() <= 0) return false;
            auto line = p_.read_line(left);
            if (!line) return pred();  // timed out, or the output ended
            take(std::move(*line));
        }
        return true;
    }
    bool wait_ready(std::chrono::milliseconds t = 30s) {
        return read_until([&] { return count("ready") > 0; }, t);
    }
    /// Waits until `n` events of kind `what` were printed.
    bool wait_count(const std::string& what, std::size_t n, std::chrono::milliseconds t) {
        return read_until([&] { return count(what) >= n; }, t);
    }
    /// After the worker exited: reads whatever it printed last.
    void read_rest(std::chrono::milliseconds t = 5s) {
        read_until([] { return false; }, t);
    }

    std::size_t count(const std::string& what) const {
        return static_cast<std::size_t>(std::count_if(events_.begin(), events_.end(),
                                                      [&](const worker_event& e) { return e.what() == what; }));
    }
    /// How many jobs (distinct ids) had an event of kind `what`: a job run
    /// twice counts once.
    std::size_t jobs_with(const std::string& what) const {
        std::set<std::string> ids;
        for (const auto& e : events_)
            if (e.what() == what) ids.insert(e.id());
        return ids.size();
    }
    std::vector<worker_event> of(const std::string& what) const {
        std::vector<worker_event> out;
        for (const auto& e : events_)
            if (e.what() == what) out.push_back(e);
        return out;
    }
    /// Index of the first event of kind `what` (for `id` when not empty) in
    /// print order, or -1.
    long index_of(const std::string& what, const std::string& id = "") const {
        for (std::size_t i = 0; i < events_.size(); ++i)
            if (events_[i].what() == what && (id.empty() || events_[i].id() == id)) return static_cast<long>(i);
        return -1;
    }
    const std::vector<worker_event>& events() const { return events_; }

    /// Everything it wrote on stderr so far (its connection events).
    const std::string& err_text() { return p_.err_text(); }
    /// The last lines printed and stderr so far, for failure messages.
    std::string transcript() {
        std::string s = "--- stdout (last lines) ---\n";
        const std::size_t from = events_.size() > 40 ? events_.size() - 40 : 0;
        for (std::size_t i = from; i < events_.size(); ++i) s += events_[i].raw + "\n";
        return s + "--- stderr ---\n" + p_.err_text();
    }

    void signal(int sig) { p_.signal(sig); }
    std::optional<int> wait_exit(std::chrono::milliseconds t) { return p_.wait_exit(t); }
    pid_t pid() const { return p_.pid(); }

private:
    static std::vector<std::string> argv(const std::string& url, const std::string& queue,
                                         std::vector<std::string> extra) {
        std::vector<std::string> a{echo_worker_path(), "--url", url, "--queue", queue};
        a.insert(a.end(), extra.begin(), extra.end());
        return a;
    }
    static std::vector<std::string> with_program(std::vector<std::string> args) {
        args.insert(args.begin(), echo_worker_path());
        return args;
    }
    void take(std::string line) {
        worker_event e;
        e.f = json_line::parse(line).value_or(json_line::fields{});
        e.raw = std::move(line);
        events_.push_back(std::move(e));
    }

    child_process p_;
    std::vector<worker_event> events_;
};

/// Publishes job `id` due now to `q`, checks that worker `w` runs it to
/// success within 10 s, then stops it with SIGTERM and checks exit 0.
inline void run_one_job_then_stop(worker_process& w, const std::string& url, const std::string& q,
                                  const std::string& id) {
    connected_client c(url);
    publish_raw(confirm_channel(c), q, id, {{"perform_job_at", epoch(sys::now())}});
    CHECK_MESSAGE(w.wait_count("succeeded", 1, 10s), w.transcript());
    w.signal(SIGTERM);
    CHECK(w.wait_exit(30s) == 0);
}

/// Reads every worker's output for `t`, 50 ms at a time each, so that none
/// blocks on its full pipe (and starts its jobs late for the test's sake);
/// `after_read(i)` after each read of worker i, when given.
inline void pump_workers(std::vector<std::unique_ptr<worker_process>>& workers, std::chrono::milliseconds t,
                         const std::function<void(std::size_t)>& after_read = {}) {
    const auto until = steady::now() + t;
    while (steady::now() < until)
        for (std::size_t i = 0; i < workers.size(); ++i) {
            workers[i]->read_until([] { return false; }, std::chrono::milliseconds(50));
            if (after_read) after_read(i);
        }
}

/// `command()` (a cluster command, rabbitmqctl: seconds) run on a thread of
/// its own while pump_workers reads the workers' output; its result.
template <class Command>
auto pump_workers_while(std::vector<std::unique_ptr<worker_process>>& workers, Command command,
                        const std::function<void(std::size_t)>& after_read = {}) {
    auto done = std::async(std::launch::async, std::move(command));
    while (done.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready)
        pump_workers(workers, std::chrono::milliseconds(50), after_read);
    return done.get();
}

/// Deletes a worker's queues (work, dead-letter, wait) when the test ends,
/// passed or failed. Never fails the test itself: no assertions here.
struct queue_guard {
    std::string url;
    tarry::subscription_options o;

    queue_guard(std::string u, const std::string& queue) : url(std::move(u)) { o.queue = queue; }
    queue_guard(const queue_guard&) = delete;
    queue_guard& operator=(const queue_guard&) = delete;
    ~queue_guard() {
        try {
            delete_all();
        } catch (...) {
        }
    }

private:
    void delete_all() {
        auto parsed = amqp::parse_url(url);
        if (parsed.error) return;
        tarry_test::io_thread io;
        amqp::connection conn(io.executor(), parsed.config);
        auto connected = conn.async_connect(use_future);
        if (connected.wait_for(10s) != std::future_status::ready || connected.get()) return;
        auto opened = conn.async_open_channel(use_future);
        if (opened.wait_for(10s) == std::future_status::ready) {
            auto [ec, ch] = opened.get();
            if (!ec) {
                auto names = queue_names(o);
                for (const auto& n : names) ch.async_delete_queue(n, {}, use_future).wait_for(10s);
            }
        }
        conn.async_close(use_future).wait_for(10s);
    }
};

/// Ready messages in `q`, counted on a connection of its own (passive
/// queue.declare).
inline std::uint32_t ready_in(const std::string& url, const std::string& q) {
    connected_client c(url);
    return value_of(c.open_channel().async_declare_queue(passive_queue(q), use_future)).message_count;
}

/// `url` with a connection_name query parameter added.
inline std::string url_named(const std::string& url, const std::string& name) {
    return url + (url.find('?') == std::string::npos ? "?" : "&") + "connection_name=" + name;
}

}  // namespace consumer_it
