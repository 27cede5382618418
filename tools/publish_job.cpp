// Publishing one job and waiting for its confirm (see publish_job.hpp): a
// connection and a publisher on an I/O thread of their own, for one job.
#include "publish_job.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace cli {

namespace {

/// How long to wait for the broker's confirm (e.g. while it blocks publishers).
constexpr std::chrono::seconds confirm_wait{30};

}  // namespace

tarry::wall_time due_time(args& a, tarry::wall_time now) {
    using std::chrono::microseconds;
    const auto latest = std::chrono::duration_cast<microseconds>(tarry::wall_time::max().time_since_epoch()) -
                        std::chrono::seconds(1);
    if (a.has("--delay-ms")) {
        const std::size_t n = a.number("--delay-ms", 0);
        const auto room = std::chrono::duration_cast<std::chrono::milliseconds>(
            latest - std::chrono::duration_cast<microseconds>(now.time_since_epoch()));
        if (n > static_cast<std::uint64_t>(room.count()))
            a.fail("--delay-ms is too far out: at most " + std::to_string(room.count()) + " from now");
        return now + std::chrono::milliseconds(static_cast<std::int64_t>(n));
    }
    const double at = a.real("--at");
    if (!(at >= 0) || at * 1e6 >= static_cast<double>(latest.count()))
        a.fail("--at needs epoch seconds from 0 to " + std::to_string(latest.count() / 1000000));
    const microseconds since_epoch(std::llround(at * 1e6));
    return tarry::wall_time(std::chrono::duration_cast<tarry::wall_time::duration>(since_epoch));
}

tarry::amqp::connection_config broker_of(const args& a, const std::string& url) {
    auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) a.fail("bad --url: " + parsed.detail);
    return std::move(parsed.config);
}

int publish_job(const tarry::amqp::connection_config& broker, const job_to_publish& job, const char* program) {
    // Why the connect and the publish failed: written on the I/O thread when
    // they complete, so they outlive it (a publish not confirmed in time may
    // still complete while the connection closes).
    tarry::amqp::diagnostics connect_why, publish_why;
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    int status = 0;
    {
        tarry::amqp::connection conn(io.get_executor(), broker);
        if (conn.async_connect(connect_why, boost::asio::use_future).get()) {
            std::fprintf(stderr, "%s: cannot connect to %s: %s\n", program,
                         tarry::amqp::to_redacted_url(broker).c_str(), connect_why.message.c_str());
            status = 1;
        } else {
            tarry::publisher pub(conn);
            tarry::amqp::message m(job.body);
            m.properties.message_id = job.id;
            auto confirmed = pub.async_publish("", job.queue, std::move(m), tarry::job_schedule::at(job.due),
                                               publish_why, boost::asio::use_future);
            status = 1;
            if (confirmed.wait_for(confirm_wait) != std::future_status::ready) {
                std::fprintf(stderr,
                             "%s: the broker did not confirm the job within %lld s; it may or may "
                             "not have been queued\n",
                             program, static_cast<long long>(confirm_wait.count()));
            } else if (const auto ec = confirmed.get(); ec == tarry::publish_errc::unroutable) {
                std::fprintf(stderr,
                             "%s: queue '%s' does not exist or is not bound: no queue took the "
                             "job (start its worker first, which declares it)\n",
                             program, job.queue.c_str());
            } else if (ec) {
                std::fprintf(stderr, "%s: the job was not published: %s\n", program,
                             publish_why.message.c_str());
            } else {
                std::printf("published %s due %s to %s\n", job.id.c_str(), epoch_text(job.due).c_str(),
                            job.queue.c_str());
                status = 0;
            }
        }
        conn.async_close(boost::asio::use_future).wait_for(std::chrono::seconds(5));
    }
    guard.reset();
    io_thread.join();
    return status;
}

}  // namespace cli
