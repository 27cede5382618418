// AMQP client throughput against a real broker: publish with confirms and
// consume with one ack per message, for tarry on one connection, tarry on
// several connections at once (how much the broker itself sustains on this
// machine), and Debian's pika as the baseline, all in one run.
//
//   amqp_client_bench AMQP_URL [MESSAGES=100000] [BODY_BYTES=128] [PIKA_MESSAGES=10000]
//
// Without a URL argument it uses TARRY_TEST_AMQP_URL (scripts/with-broker).
#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/url.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace amqp = tarry::amqp;
using boost::asio::use_future;
using clock_type = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "amqp_client_bench: %s\n", what.c_str());
    std::exit(1);
}

void check(std::error_code ec, const char* what) {
    if (ec) die(std::string(what) + ": " + ec.message());
}

/// One connection on its own I/O thread.
struct endpoint {
    explicit endpoint(const amqp::connection_config& cfg)
        : guard(io.get_executor()), conn(io.get_executor(), cfg), thread([this] { io.run(); }) {
        check(conn.async_connect(use_future).get(), "connect");
        auto [ec, c] = conn.async_open_channel(use_future).get();
        check(ec, "open channel");
        ch = c;
    }
    ~endpoint() {
        conn.async_close(use_future).wait_for(std::chrono::seconds(10));
        guard.reset();
        thread.join();
    }
    boost::asio::io_context io;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
    amqp::connection conn;
    std::thread thread;
    amqp::channel ch;
};

std::string queue_name(const char* what) {
    return std::string("tarry-bench-") + what + "-" + std::to_string(::getpid()) + "-" +
           std::to_string(std::random_device{}());
}

/// Publishes n messages with confirms, at most `window` unconfirmed; returns msgs/s.
double publish_confirmed(endpoint& e, const std::string& q, std::size_t n, std::size_t size,
                         std::size_t window = 2000) {
    check(e.ch.async_confirm_select(use_future).get(), "confirm.select");
    const amqp::message m(std::string(size, 'x'));
    std::mutex mu;
    std::condition_variable cv;
    std::size_t outstanding = 0, done = 0;
    std::atomic<int> failures{0};
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < n; ++i) {
        {
            std::unique_lock lock(mu);
            cv.wait(lock, [&] { return outstanding < window; });
            ++outstanding;
        }
        e.ch.async_publish("", q, m, {}, [&](std::error_code ec) {
            if (ec) ++failures;
            std::lock_guard lock(mu);
            --outstanding;
            ++done;
            cv.notify_all();
        });
    }
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return done == n; });
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    if (failures) die("publishes failed: " + std::to_string(failures.load()));
    return static_cast<double>(n) / s;
}

/// Consumes n messages (prefetch 1000), acking each; returns msgs/s.
double consume_acked(endpoint& e, const std::string& q, std::size_t n) {
    amqp::qos_options qos;
    qos.prefetch_count = 1000;
    check(e.ch.async_qos(qos, use_future).get(), "qos");
    std::promise<void> all;
    std::size_t got = 0;
    amqp::consumer_handlers h;
    auto ch = e.ch;
    h.on_delivery = [&, ch](amqp::delivery d) {
        ch.async_ack(d.delivery_tag, {}, [](std::error_code) {});
        if (++got == n) all.set_value();
    };
    amqp::consume_options o;
    o.queue = q;
    const auto t0 = clock_type::now();
    auto [ec, tag] = e.ch.async_consume(o, h, use_future).get();
    check(ec, "consume");
    all.get_future().wait();
    const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
    check(e.ch.async_cancel(tag, use_future).get(), "cancel");
    return static_cast<double>(n) / s;
}

std::string declare(endpoint& e, const char* what) {
    amqp::queue_options o;
    o.name = queue_name(what);
    o.exclusive = true;
    auto [ec, info] = e.ch.async_declare_queue(o, use_future).get();
    check(ec, "declare");
    return info.name;
}

double json_number(const std::string& text, const std::string& key) {
    const auto at = text.find("\"" + key + "\": ");
    if (at == std::string::npos) die("pika baseline printed no " + key + ": " + text);
    return std::atof(text.c_str() + at + key.size() + 4);
}

}  // namespace

int main(int argc, char** argv) {
    const char* env_url = std::getenv("TARRY_TEST_AMQP_URL");
    const std::string url = argc > 1 ? argv[1] : (env_url ? env_url : "");
    if (url.empty()) die("usage: amqp_client_bench AMQP_URL [MESSAGES] [BODY_BYTES] [PIKA_MESSAGES]");
    const std::size_t n = argc > 2 ? std::stoul(argv[2]) : 100000;
    const std::size_t size = argc > 3 ? std::stoul(argv[3]) : 128;
    const std::size_t pika_n = argc > 4 ? std::stoul(argv[4]) : 10000;
    auto parsed = amqp::parse_url(url);
    if (parsed.error) die(parsed.detail);

    // tarry, one connection.
    double pub1 = 0, con1 = 0;
    {
        endpoint e(parsed.config);
        const auto q = declare(e, "one");
        pub1 = publish_confirmed(e, q, n, size);
        con1 = consume_acked(e, q, n);
    }

    // What the broker sustains here: four tarry connections at once.
    constexpr int k = 4;
    double pubk = 0, conk = 0;
    {
        std::vector<std::unique_ptr<endpoint>> es;
        std::vector<std::string> qs;
        for (int i = 0; i < k; ++i) {
            es.push_back(std::make_unique<endpoint>(parsed.config));
            qs.push_back(declare(*es.back(), "many"));
        }
        const auto run = [&](auto&& f) {
            const auto t0 = clock_type::now();
            std::vector<std::thread> ts;
            for (int i = 0; i < k; ++i) ts.emplace_back([&, i] { f(*es[static_cast<std::size_t>(i)], qs[static_cast<std::size_t>(i)]); });
            for (auto& t : ts) t.join();
            return static_cast<double>(n) * k /
                   std::chrono::duration<double>(clock_type::now() - t0).count();
        };
        pubk = run([&](endpoint& e, const std::string& q) { publish_confirmed(e, q, n, size); });
        conk = run([&](endpoint& e, const std::string& q) { consume_acked(e, q, n); });
    }

    // pika, the baseline.
    std::string cmd = "/usr/bin/python3 '" + std::string(std::getenv("TARRY_SOURCE_ROOT") ? std::getenv("TARRY_SOURCE_ROOT") : ".") +
                      "/bench/pika_baseline.py' '" + url + "' " + std::to_string(pika_n) + " " +
                      std::to_string(size);
    std::string out;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
        char buf[4096];
        while (std::fgets(buf, sizeof buf, p)) out += buf;
        if (::pclose(p) != 0) die("pika baseline failed: " + out);
    } else {
        die("cannot run the pika baseline");
    }
    const double pika_pub = json_number(out, "publish_confirm_per_s");
    const double pika_con = json_number(out, "consume_ack_per_s");

    std::printf("AMQP client, %zu messages of %zu bytes (pika: %zu)\n", n, size, pika_n);
    std::printf("%-34s %14s %14s\n", "", "publish+confirm", "consume+ack");
    std::printf("%-34s %12.0f/s %12.0f/s\n", "tarry, 1 connection", pub1, con1);
    std::printf("%-34s %12.0f/s %12.0f/s\n", "tarry, 4 connections (broker max)", pubk, conk);
    std::printf("%-34s %12.0f/s %12.0f/s\n", "pika 1.2 BlockingConnection", pika_pub, pika_con);
    std::printf("%-34s %13.1fx %13.1fx\n", "tarry / pika", pub1 / pika_pub, con1 / pika_con);
    std::printf("%-34s %12.0f%% %12.0f%%\n", "tarry 1 conn / broker max", 100 * pub1 / pubk,
                100 * con1 / conk);
    return 0;
}
