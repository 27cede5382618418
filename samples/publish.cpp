// publish: publishes one job with a schedule and waits for the broker's
// confirm. Its command line is a public interface:
//
//   publish --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S) [--body TEXT]
//
// The job goes to the default exchange with routing key Q (the queue must
// exist: start its worker first), message_id ID, persistent, with
// perform_job_at = now + N ms or EPOCH_S (a fraction allowed). Prints
// `published ID due EPOCH_S to Q`; exit 0 when confirmed, 1 on any error
// (said on stderr), 2 on bad arguments.
#include "sample_args.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cmath>
#include <cstdio>
#include <thread>

namespace {
const char* const usage =
    "usage: publish --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S) [--body TEXT]\n";
}

int main(int argc, char** argv) {
    samples::args args(argc, argv, usage);
    const std::string url = args.required("--url");
    const std::string queue = args.required("--queue");
    const std::string id = args.required("--id");
    if (args.has("--delay-ms") == args.has("--at")) args.fail("give exactly one of --delay-ms and --at");
    tarry::job_schedule when = tarry::job_schedule::now();
    if (args.has("--delay-ms")) {
        when = tarry::job_schedule::after(args.millis("--delay-ms", {}));
    } else {
        const double at = args.real("--at");
        when = tarry::job_schedule::at(tarry::wall_time(std::chrono::duration_cast<tarry::wall_time::duration>(
            std::chrono::microseconds(std::llround(at * 1e6)))));
    }
    const std::string body = args.text("--body", "");
    args.finish();
    const auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) {
        std::fprintf(stderr, "publish: bad --url: %s\n", parsed.detail.c_str());
        return 2;
    }

    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    int status = 0;
    {
        tarry::amqp::connection conn(io.get_executor(), parsed.config);
        if (auto failed = conn.async_connect(boost::asio::use_future).get()) {
            std::fprintf(stderr, "publish: cannot connect to %s: %s\n",
                         tarry::amqp::to_redacted_url(parsed.config).c_str(), conn.last_error().message.c_str());
            status = 1;
        } else {
            tarry::publisher pub(conn);
            tarry::amqp::message m(body);
            m.properties.message_id = id;
            const auto ec = pub.async_publish("", queue, std::move(m), when, boost::asio::use_future).get();
            if (ec == tarry::publish_errc::unroutable) {
                std::fprintf(stderr, "publish: queue '%s' does not exist (no queue took the job): %s\n",
                             queue.c_str(), ec.message().c_str());
                status = 1;
            } else if (ec) {
                std::fprintf(stderr, "publish: %s\n", ec.message().c_str());
                status = 1;
            } else {
                const auto due = when.due(std::chrono::system_clock::now());
                std::printf("published %s due %s to %s\n", id.c_str(), samples::epoch_text(due).c_str(),
                            queue.c_str());
            }
        }
        conn.async_close(boost::asio::use_future).wait_for(std::chrono::seconds(5));
    }
    guard.reset();
    io_thread.join();
    return status;
}
