// What a look at a busy consumer costs: GET /metrics, GET /jobs?limit=1000
// and GET / (the status page) on tarry::http_endpoint while the consumer
// holds 10^5 jobs (--held N), beside GET /healthz on the same keep-alive
// connection in the same run (the baseline: a request that reads nothing).
// Prints each route's median and p99 in ms and their ratios to /healthz.
// Needs TARRY_TEST_AMQP_URL (scripts/run-bench starts a broker).
//
//   http_scrape_bench [--held N] [--rounds N]
#include "consumer_bench_support.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/http/http_endpoint.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace {

namespace http = boost::beast::http;
using namespace cbench;

/// One keep-alive connection; get() returns the milliseconds a request took.
class keep_alive_client {
public:
    explicit keep_alive_client(const boost::asio::ip::tcp::endpoint& at) : stream_(io_) { stream_.connect(at); }
    double get(const std::string& target, std::size_t& bytes) {
        http::request<http::empty_body> req(http::verb::get, target, 11);
        req.set(http::field::host, "127.0.0.1");
        const auto t0 = steady::now();
        http::write(stream_, req);
        http::response_parser<http::string_body> parser;
        parser.body_limit(64 * 1024 * 1024);
        http::read(stream_, buffer_, parser);
        const double ms = seconds_since(t0) * 1000;
        if (parser.get().result_int() != 200) die(target + " answered " + std::to_string(parser.get().result_int()));
        bytes = parser.get().body().size();
        return ms;
    }

private:
    boost::asio::io_context io_;
    boost::beast::tcp_stream stream_;
    boost::beast::flat_buffer buffer_;
};

}  // namespace

int main(int argc, char** argv) try {
    const std::size_t held = number_arg(argc, argv, "--held", 100000);
    const std::size_t rounds = number_arg(argc, argv, "--rounds", 200);
    const context cx = context_from_env();

    endpoint broker(cx.config);
    auto o = options_for(cx, fresh_queue_name("http-scrape"));
    o.max_held = held + 1000;
    o.hold_horizon = std::chrono::minutes(15);
    o.workers = 1;
    declare_work_queue(broker, o.queue);
    {
        tarry::consumer worker(cx.config, o, [](const tarry::job&) { return tarry::job_outcome::success(); });
        worker.start();
        {
            confirmed_publisher pub(broker);
            const auto due = sys::now() + std::chrono::minutes(10);
            for (std::size_t i = 0; i < held; ++i)
                pub.publish(o.queue, job_message("far-" + std::to_string(i), due + std::chrono::microseconds(i)));
            pub.wait_all();
        }
        const auto t0 = steady::now();
        while (worker.stats().held < held) {
            if (seconds_since(t0) > 120) die("the consumer did not hold every job within 120 s");
            std::this_thread::sleep_for(50ms);
        }
        tarry::http_endpoint ep(worker, &broker.conn);
        ep.start();
        keep_alive_client client(ep.local_endpoint());
        const std::vector<std::string> routes{"/healthz", "/metrics", "/jobs?limit=1000", "/"};
        std::map<std::string, std::vector<double>> ms;
        std::map<std::string, std::size_t> bytes;
        for (std::size_t r = 0; r < rounds + 10; ++r) {
            for (const auto& route : routes) {
                const double t = client.get(route, bytes[route]);
                if (r >= 10) ms[route].push_back(t);  // the first rounds warm up
            }
        }
        ep.stop();
        const auto base = summarize(ms["/healthz"]);
        std::printf("http scrape: %zu jobs held, %zu rounds, one keep-alive connection, %s\n", held,
                    rounds, broker.server.c_str());
        std::printf("%-18s %10s %10s %10s %12s\n", "route", "p50 ms", "p99 ms", "p50/base", "bytes");
        for (const auto& route : routes) {
            const auto s = summarize(ms[route]);
            std::printf("%-18s %10.3f %10.3f %10.2f %12zu\n", route.c_str(), s.p50, s.p99, s.p50 / base.p50,
                        bytes[route]);
        }
        const auto scrape = summarize(ms["/metrics"]);
        std::printf("bar: a scrape with %zu held costs < 5 ms: p99 %.3f ms, %s\n", held, scrape.p99,
                    verdict(scrape.p99 < 5.0));
        worker.stop();
    }
    delete_queues(broker, o);
    return 0;
} catch (const std::exception& e) {
    std::fprintf(stderr, "http_scrape_bench: %s\n", e.what());
    return 1;
}
