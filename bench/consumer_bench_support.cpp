// Shared pieces of bench/consumer_bench (see consumer_bench_support.hpp).
#include "consumer_bench_support.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/contract/random_id.hpp"
#include "tarry/parking/wait_ladder.hpp"

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

namespace cbench {

using boost::asio::use_future;

void die(const std::string& what) { throw failure(what); }

context context_from_env() {
    const char* url = std::getenv("TARRY_TEST_AMQP_URL");
    if (!url) die("TARRY_TEST_AMQP_URL is not set (make bench starts a broker)");
    const auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) die("bad TARRY_TEST_AMQP_URL: " + parsed.detail);
    context cx;
    cx.url = url;
    cx.config = parsed.config;
    return cx;
}

std::size_t number_arg(int argc, char** argv, const char* name, std::size_t fallback) {
    for (int i = 1; i + 1 < argc; ++i)
        if (std::strcmp(argv[i], name) == 0) return std::strtoull(argv[i + 1], nullptr, 10);
    return fallback;
}

void check(std::error_code ec, const std::string& what) {
    if (ec) die(what + ": " + ec.message());
}

namespace {
amqp::connection_hooks server_hook(std::string& server) {
    amqp::connection_hooks h;
    h.on_open = [&server](const amqp::connection_info& info) {
        const auto text = [&](const char* key) -> std::string {
            const auto* v = info.server_properties.find(key);
            const auto* s = v ? v->get_if<std::string>() : nullptr;
            return s ? *s : "?";
        };
        server = text("product") + " " + text("version");
    };
    return h;
}
}  // namespace

endpoint::endpoint(const amqp::connection_config& cfg)
    : guard(io.get_executor()),
      conn(io.get_executor(), cfg, server_hook(server)),
      thread([this] { io.run(); }) {
    auto f = conn.async_connect(use_future);
    if (f.wait_for(30s) != std::future_status::ready) die("connect timed out");
    check(f.get(), "connect");
    ch = open_channel();
}

endpoint::~endpoint() {
    conn.async_close(use_future).wait_for(10s);
    guard.reset();
    io.stop();
    thread.join();
}

amqp::channel endpoint::open_channel() {
    auto f = conn.async_open_channel(use_future);
    if (f.wait_for(30s) != std::future_status::ready) die("open channel timed out");
    auto [ec, c] = f.get();
    check(ec, "open channel");
    return c;
}

std::string fresh_queue_name(const std::string& what) {
    static const auto salt = std::random_device{}() % 1000000;
    static std::atomic<int> n{0};
    return "tarry-bench-consumer-" + what + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(salt) + "-" + std::to_string(++n);
}

void declare_work_queue(endpoint& e, const std::string& name, tarry::queue_kind kind) {
    amqp::queue_options o;
    o.name = name;
    o.durable = true;
    amqp::add_queue_kind_arguments(o.arguments, kind, false);  // as the consumer declares it
    auto f = e.ch.async_declare_queue(o, use_future);
    if (f.wait_for(30s) != std::future_status::ready) die("declare timed out");
    check(std::get<0>(f.get()), "declare " + name);
}

void delete_queues(endpoint& e, const tarry::subscription_options& o) {
    std::vector<std::string> names{o.queue, o.dead_letter_queue_name()};
    const tarry::parking::wait_ladder ladder(o.queue, o.effective_min_park_ttl(), o.hold_horizon);
    for (const auto& w : ladder.queues()) names.push_back(w.name);
    // A channel of its own: a refused delete closes only that one.
    auto ch = e.open_channel();
    for (const auto& n : names) ch.async_delete_queue(n, {}, use_future).wait_for(30s);
    ch.async_close(use_future).wait_for(10s);
}

tarry::subscription_options options_for(const context& cx, const std::string& queue) {
    tarry::subscription_options o;
    o.queue = queue;
    o.shutdown_grace = 5s;
    o.channels = cx.channels;
    return o;
}

std::string hex_id(std::mt19937_64& rng) {
    const auto hi = rng();
    return tarry::contract::hex_id(hi, rng());
}

sys::time_point to_micros(sys::time_point t) {
    return std::chrono::floor<std::chrono::microseconds>(t);
}

amqp::message job_message(const std::string& id, std::optional<sys::time_point> due) {
    amqp::basic_properties p;
    p.message_id = id;
    if (due) {
        amqp::field_table h;
        h.set("perform_job_at", std::chrono::duration<double>(due->time_since_epoch()).count());
        p.headers = std::move(h);
    }
    std::string body = "job " + id + " ";
    body.resize(body_bytes, '.');
    return amqp::message(body, std::move(p));
}

confirmed_publisher::confirmed_publisher(endpoint& e, std::size_t window)
    : ch_(e.open_channel()), window_(window) {
    auto f = ch_.async_confirm_select(use_future);
    if (f.wait_for(30s) != std::future_status::ready) die("confirm.select timed out");
    check(f.get(), "confirm.select");
}

confirmed_publisher::~confirmed_publisher() {
    {
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, 60s, [&] { return outstanding_ == 0; });
    }
    ch_.async_close(use_future).wait_for(10s);
}

void confirmed_publisher::publish(const std::string& queue, const amqp::message& m) {
    {
        std::unique_lock lock(mu_);
        if (!cv_.wait_for(lock, 60s, [&] { return outstanding_ < window_; }))
            die("publish: no confirm for 60 s");
        ++outstanding_;
    }
    ch_.async_publish("", queue, m, {}, [this](std::error_code ec) {
        std::lock_guard lock(mu_);
        if (ec) ++failures_;
        --outstanding_;
        cv_.notify_all();
    });
}

void confirmed_publisher::wait_all() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, 60s, [&] { return outstanding_ == 0; }))
        die("publish: confirms missing after 60 s");
    if (failures_) die(std::to_string(failures_) + " publishes were refused");
}

void run_log::add(const tarry::job_event& e) {
    using kind = tarry::job_event::kind;
    if (e.what != kind::run && e.what != kind::succeeded) return;
    if (e.id.size() <= prefix_.size() || e.id.compare(0, prefix_.size(), prefix_) != 0) return;
    std::size_t index = 0;
    const char* first = e.id.data() + prefix_.size();
    if (std::from_chars(first, e.id.data() + e.id.size(), index).ec != std::errc()) return;
    std::lock_guard lock(mu_);
    if (e.what == kind::run) {
        runs_.push_back({index, e.attempt, e.due, e.at});
    } else {
        ++succeeded_;
        last_success_ = std::max(last_success_, e.at);
    }
    cv_.notify_all();
}

tarry::consumer_hooks run_log::hooks() {
    tarry::consumer_hooks h;
    h.on_event = [this](const tarry::job_event& e) { add(e); };
    return h;
}

bool run_log::wait_runs(std::size_t n, std::chrono::milliseconds t) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, t, [&] { return runs_.size() >= n; });
}

bool run_log::wait_succeeded(std::size_t n, std::chrono::milliseconds t) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, t, [&] { return succeeded_ >= n; });
}

std::vector<run_record> run_log::runs() {
    std::lock_guard lock(mu_);
    return runs_;
}

std::size_t run_log::succeeded() {
    std::lock_guard lock(mu_);
    return succeeded_;
}

sys::time_point run_log::last_success() {
    std::lock_guard lock(mu_);
    return last_success_;
}

summary summarize(std::vector<double> v) {
    summary s;
    s.n = v.size();
    if (v.empty()) return s;
    std::sort(v.begin(), v.end());
    const auto rank = [&](double q) {
        const auto r = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
        return v[std::clamp<std::size_t>(r, 1, v.size()) - 1];
    };
    s.min = v.front();
    s.p50 = rank(0.50);
    s.p90 = rank(0.90);
    s.p99 = rank(0.99);
    s.max = v.back();
    return s;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::string rounds_text(const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : " · ") + std::to_string(static_cast<long>(x));
    return s;
}

double ms_between(sys::time_point from, sys::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
}

double seconds_since(steady::time_point t0) {
    return std::chrono::duration<double>(steady::now() - t0).count();
}

long rss_bytes() {
    std::ifstream f("/proc/self/statm");
    long size = 0, resident = 0;
    f >> size >> resident;
    return resident * ::sysconf(_SC_PAGESIZE);
}

const char* verdict(bool met) { return met ? "met" : "MISSED"; }

std::string run_command(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) die("cannot run: " + cmd);
    char buf[4096];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    if (::pclose(p) != 0) die("failed: " + cmd + "\n" + out);
    return out;
}

std::vector<std::string> consuming_connections(const std::string& broker, const std::string& dir,
                                               const std::string& name) {
    const auto out = run_command(broker + " ctl " + dir +
                                 " list_connections pid client_properties --no-table-headers --quiet");
    std::vector<std::string> pids;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);)
        if (line.find("\"" + name + "\"") != std::string::npos)  // <<"name">>, not <<"name (copies)">>
            pids.push_back(line.substr(0, line.find('\t')));
    return pids;
}

}  // namespace cbench
