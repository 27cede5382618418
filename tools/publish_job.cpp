// Publishing one job and waiting for its confirm (see publish_job.hpp): a
// publisher on a connection of its own (broker_session.hpp), for one job.
#include "publish_job.hpp"

#include "broker_session.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/publisher/publisher.hpp"
#include "tarry/time/epoch_text.hpp"

#include <boost/asio/use_future.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace cli {

tarry::amqp::field_table header_options(args& a) {
    tarry::amqp::field_table headers;
    for (const auto& kv : a.all("--header")) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0 || eq > 255)
            a.fail("--header needs K=V with a name of 1 to 255 bytes, not '" + kv + "'");
        headers.set(kv.substr(0, eq), kv.substr(eq + 1));
    }
    return headers;
}

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
    // Written on the I/O thread when the publish completes, which with_broker
    // joins before it returns (a publish not confirmed in time may still
    // complete while the connection closes).
    tarry::amqp::diagnostics why;
    return with_broker(broker, program, [&](tarry::amqp::connection& conn) {
        tarry::publisher_options o;
        o.park_beyond = job.park_beyond;
        o.delay_cascade_prefix = job.cascade_prefix;
        tarry::publisher pub(conn, o);
        tarry::amqp::message m(job.body);
        m.properties.message_id = job.id;
        auto confirmed = pub.async_publish("", job.queue, std::move(m), tarry::job_schedule::at(job.due), why,
                                           boost::asio::use_future);
        const auto ec = wait_confirm(confirmed, program, "the job");
        if (!ec) return 1;
        if (*ec == tarry::publish_errc::unroutable) {
            std::fprintf(stderr,
                         "%s: queue '%s' does not exist or is not bound: no queue took the "
                         "job (start its worker first, which declares it)\n",
                         program, job.queue.c_str());
            return 1;
        }
        if (*ec) {
            std::fprintf(stderr, "%s: the job was not published: %s\n", program, why.message.c_str());
            return 1;
        }
        std::printf("published %s due %s to %s\n", job.id.c_str(), tarry::epoch_seconds_text(job.due).c_str(), job.queue.c_str());
        return 0;
    });
}

}  // namespace cli
