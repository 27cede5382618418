// async_http_worker: jobs whose handler is a coroutine making an HTTP request.
//
//   async_http_worker --url AMQP_URL [--queue NAME] [--jobs N]
//
// Starts a small HTTP server on a free loopback port (Boost.Beast; it
// answers 503 Service Unavailable to the first request for each odd-numbered
// job, 200 OK otherwise), a scheduling consumer whose handler is a coroutine
// (tarry::async_job_handler) that sends one GET per job with Boost.Beast and
// fails on a 5xx answer, and publishes N jobs (default 20) due now. Server,
// consumer, publisher and every handler share one io_context and its one
// thread: a job waiting for its answer holds no thread. A failed job is
// retried with backoff (200 ms) and succeeds on its second attempt. Prints
// each job's events; exits 0 once every job succeeded, each odd one after
// exactly one retry, else 1 (within 30 s).
#include "command_args.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/consumer/async_job_handler.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <unistd.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // Asio's coroutine frames (a GCC 12 false positive)
#endif

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// ---- the HTTP server the jobs call ------------------------------------------

// Requests seen per target (on the io_context's one thread).
std::map<std::string, int> hits;

// The answer to GET /job/<n>: 503 the first time for an odd n, else 200.
http::response<http::string_body> answer(const http::request<http::string_body>& req) {
    const std::string target(req.target());
    const int seen = ++hits[target];
    const bool odd = !target.empty() && (target.back() - '0') % 2 == 1;
    http::response<http::string_body> res{odd && seen == 1 ? http::status::service_unavailable : http::status::ok,
                                          req.version()};
    res.set(http::field::content_type, "text/plain");
    res.body() = res.result() == http::status::ok ? "done\n" : "try again later\n";
    res.keep_alive(false);
    res.prepare_payload();
    return res;
}

asio::awaitable<void> serve_one(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    beast::flat_buffer buffer;
    http::request<http::string_body> req;
    stream.expires_after(5s);  // a deadline on every read and write
    co_await http::async_read(stream, buffer, req, asio::use_awaitable);
    stream.expires_after(5s);
    co_await http::async_write(stream, answer(req), asio::use_awaitable);
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

asio::awaitable<void> serve(tcp::acceptor& acceptor) {
    for (;;) {
        auto socket = co_await acceptor.async_accept(asio::use_awaitable);
        asio::co_spawn(acceptor.get_executor(), serve_one(std::move(socket)), asio::detached);
    }
}

// ---- the job handler: a coroutine ------------------------------------------

// GET /job/<id> from the server; a 5xx answer is a failure (retried with
// backoff), any other error answer rejects the job, 2xx succeeds. A
// connection error throws: a failure too.
asio::awaitable<tarry::job_outcome> call_service(tcp::endpoint server, const tarry::job& j) {
    beast::tcp_stream stream(co_await asio::this_coro::executor);
    stream.expires_after(5s);
    co_await stream.async_connect(server, asio::use_awaitable);
    http::request<http::empty_body> req{http::verb::get, "/job/" + std::string(j.id()), 11};
    req.set(http::field::host, "127.0.0.1");
    stream.expires_after(5s);
    co_await http::async_write(stream, req, asio::use_awaitable);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    const auto status = res.result_int();
    if (status >= 500) co_return tarry::job_outcome::failure("HTTP " + std::to_string(status));
    if (status >= 300) co_return tarry::job_outcome::reject("HTTP " + std::to_string(status));
    co_return tarry::job_outcome::success();
}

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, "usage: async_http_worker --url AMQP_URL [--queue NAME] [--jobs N]\n");
    const std::string url = args.required("--url");
    const std::string queue = args.text("--queue", "tarry.async-http." + std::to_string(::getpid()));
    const int jobs = static_cast<int>(args.number("--jobs", 20));
    args.finish();
    const auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) {
        std::fprintf(stderr, "async_http_worker: bad --url: %s\n", parsed.detail.c_str());
        return 2;
    }

    asio::io_context io;
    auto guard = asio::make_work_guard(io);
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    const tcp::endpoint server = acceptor.local_endpoint();
    asio::co_spawn(io, serve(acceptor), asio::detached);

    std::mutex out;
    std::atomic<int> succeeded{0}, retried{0}, other{0};
    tarry::consumer_hooks hooks;
    hooks.on_event = [&](const tarry::job_event& e) {
        using k = tarry::job_event::kind;
        if (e.what == k::succeeded) ++succeeded;
        else if (e.what == k::retry) ++retried;
        else if (e.what != k::run) ++other;
        std::lock_guard lock(out);
        std::printf("%-9s %-4s attempt %u%s%s\n", tarry::to_string(e.what), e.id.c_str(), e.attempt,
                    e.reason.empty() ? "" : ": ", e.reason.c_str());
        std::fflush(stdout);
    };

    tarry::subscription_options o;
    o.queue = queue;
    o.max_in_flight = 100;
    o.retry = tarry::retry::backoff_policy::exponential(200ms, 2.0, 5s).with_max_attempts(3);
    o.shutdown_grace = 2s;
    std::thread io_thread([&] { io.run(); });
    int status = 1;
    try {
        // Consumer, handlers, server and publisher: all on `io`.
        tarry::consumer worker(io.get_executor(), parsed.config, o,
                               [server](const tarry::job& j) { return call_service(server, j); }, hooks);
        worker.start();
        std::printf("async_http_worker: %d jobs on queue %s, HTTP server on %s:%u\n", jobs, queue.c_str(),
                    server.address().to_string().c_str(), server.port());
        {
            tarry::amqp::connection conn(io.get_executor(), parsed.config);
            if (conn.async_connect(asio::use_future).get())
                throw std::runtime_error("cannot connect: " + conn.last_error().message);
            tarry::publisher pub(conn);
            for (int i = 0; i < jobs; ++i) {
                tarry::amqp::message m("call the service");
                m.properties.message_id = std::to_string(i);
                if (auto ec = pub.async_publish("", queue, std::move(m), tarry::job_schedule::now(),
                                                asio::use_future).get())
                    throw std::runtime_error("publish " + std::to_string(i) + ": " + ec.message());
            }
            conn.async_close(asio::use_future).wait_for(5s);
        }
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (succeeded < jobs && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(20ms);
        worker.stop();
        std::printf("async_http_worker: %d of %d jobs succeeded, %d retried after a 503 (as planned: %d)\n",
                    succeeded.load(), jobs, retried.load(), jobs / 2);
        status = succeeded == jobs && retried == jobs / 2 && other == 0 ? 0 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "async_http_worker: %s\n", e.what());
    }
    guard.reset();
    io.stop();
    io_thread.join();
    return status;
}
