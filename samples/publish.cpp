// publish: publishes one job with a schedule and waits for the broker's
// confirm. Its command line is a public interface:
//
//   publish --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S) [--body TEXT]
//
// The job goes to the default exchange with routing key Q (the queue must
// exist: start its worker first; this program declares nothing), message_id
// ID, persistent, with perform_job_at = now + N ms or EPOCH_S (a fraction
// allowed). Prints `published ID due EPOCH_S to Q` (the due time exactly as
// written, to the microsecond); exit 0 when confirmed, 1 on any error (said
// on stderr), 2 on bad arguments (with the usage).
#include "command_args.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <thread>

namespace {

const char* const usage =
    "usage: publish --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S) [--body TEXT]\n";

/// How long to wait for the broker's confirm (e.g. while it blocks publishers).
constexpr std::chrono::seconds confirm_wait{30};

/// The due time the arguments ask for, counted from `now`; a usage error
/// when it is not a time the clock can hold.
tarry::wall_time due_time(cli::args& args, tarry::wall_time now) {
    using std::chrono::microseconds;
    const auto latest = std::chrono::duration_cast<microseconds>(tarry::wall_time::max().time_since_epoch()) -
                        std::chrono::seconds(1);
    if (args.has("--delay-ms")) {
        const std::size_t n = args.number("--delay-ms", 0);
        const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
            latest - std::chrono::duration_cast<microseconds>(now.time_since_epoch()));
        if (n > static_cast<std::uint64_t>(room.count()))
            args.fail("--delay-ms is too far out: at most " + std::to_string(room.count()) + " from now");
        return now + std::chrono::milliseconds(static_cast<std::int64_t>(n));
    }
    const double at = args.real("--at");
    if (!(at >= 0) || at * 1e6 >= static_cast<double>(latest.count()))
        args.fail("--at needs epoch seconds from 0 to " + std::to_string(latest.count() / 1000000));
    const microseconds since_epoch(std::llround(at * 1e6));
    return tarry::wall_time(std::chrono::duration_cast<tarry::wall_time::duration>(since_epoch));
}

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, usage);
    const std::string url = args.required("--url");
    const std::string queue = args.required("--queue");
    const std::string id = args.required("--id");
    if (args.has("--delay-ms") == args.has("--at")) args.fail("give exactly one of --delay-ms and --at");
    // The due time is fixed here, so what is printed is what is written.
    const tarry::wall_time due = due_time(args, std::chrono::system_clock::now());
    const std::string body = args.text("--body", "");
    args.finish();
    const auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) args.fail("bad --url: " + parsed.detail);

    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    int status = 0;
    {
        tarry::amqp::connection conn(io.get_executor(), parsed.config);
        if (conn.async_connect(boost::asio::use_future).get()) {
            std::fprintf(stderr, "publish: cannot connect to %s: %s\n",
                         tarry::amqp::to_redacted_url(parsed.config).c_str(),
                         conn.last_error().message.c_str());
            status = 1;
        } else {
            tarry::publisher pub(conn);
            tarry::amqp::message m(body);
            m.properties.message_id = id;
            auto confirmed = pub.async_publish("", queue, std::move(m), tarry::job_schedule::at(due),
                                               boost::asio::use_future);
            status = 1;
            if (confirmed.wait_for(confirm_wait) != std::future_status::ready) {
                std::fprintf(stderr,
                             "publish: the broker did not confirm the job within %lld s; it may or may "
                             "not have been queued\n",
                             static_cast<long long>(confirm_wait.count()));
            } else if (const auto ec = confirmed.get(); ec == tarry::publish_errc::unroutable) {
                std::fprintf(stderr,
                             "publish: queue '%s' does not exist or is not bound: no queue took the "
                             "job (start its worker first, which declares it)\n",
                             queue.c_str());
            } else if (ec) {
                const auto why = pub.last_error();
                std::fprintf(stderr, "publish: the job was not published: %s\n",
                             (why.code == ec ? why.message : ec.message()).c_str());
            } else {
                std::printf("published %s due %s to %s\n", id.c_str(), cli::epoch_text(due).c_str(),
                            queue.c_str());
                status = 0;
            }
        }
        conn.async_close(boost::asio::use_future).wait_for(std::chrono::seconds(5));
    }
    guard.reset();
    io_thread.join();
    return status;
}
