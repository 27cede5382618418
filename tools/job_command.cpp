// tarry job: commands on one job of a queue, by its id, through the queue's
// control stream.
//
//   tarry job cancel --url URL --queue Q --id ID
//   tarry job reschedule --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S)
//                        --body TEXT [--header K=V]...
//
// cancel appends a tombstone for ID; reschedule appends one and publishes
// the job's new copy (message_id ID, the body and headers given, due as
// asked) in one step (tarry::publisher::async_cancel / async_reschedule).
// Prints `cancelled ID in Q` or `rescheduled ID due EPOCH_S in Q`; exit 0
// once the broker confirmed, 1 when it did not, 2 on bad arguments.
#include "broker_session.hpp"
#include "command_args.hpp"
#include "commands.hpp"
#include "publish_job.hpp"

#include "tarry/publisher/publisher.hpp"
#include "tarry/time/epoch_text.hpp"

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace cli {

namespace {

const char* const usage =
    "usage: tarry job cancel --url URL --queue Q --id ID\n"
    "       tarry job reschedule --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S)\n"
    "                            --body TEXT [--header K=V]...\n";

const char* const help =
    "Cancels or reschedules job ID (its message_id) of queue Q. Every consumer of Q\n"
    "drops the job's earlier copies when it admits or releases them (a run already\n"
    "started is not interrupted); cancelling an unknown or finished job does nothing.\n"
    "The commands write to Q's control stream, Q.tarry.control, declaring it the\n"
    "first time.\n"
    "  --url URL       the broker: amqp://USER:PASS@HOST:PORT/VHOST, or amqps://\n"
    "  --queue Q       the job's queue\n"
    "  --id ID         the job's id (its message_id)\n"
    "reschedule only: the job's new copy, which replaces every earlier one\n"
    "  --delay-ms N    due N milliseconds from now\n"
    "  --at EPOCH_S    due at this Unix time, in seconds (a fraction allowed)\n"
    "  --body TEXT     its body\n"
    "  --header K=V    a header (a string); may be repeated\n"
    "Prints `cancelled ID in Q` or `rescheduled ID due EPOCH_S in Q` once the broker\n"
    "confirmed.\n"
    "exit status: 0 confirmed; 1 not done or not confirmed (the reason on stderr);\n"
    "2 bad arguments\n";

}  // namespace

int job_command(int argc, char** argv) {
    const char* const program = "tarry job";
    if (argc < 2 || (std::strcmp(argv[1], "cancel") != 0 && std::strcmp(argv[1], "reschedule") != 0)) {
        if (argc >= 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
            std::fputs(usage, stdout);
            std::fputs(help, stdout);
            return 0;
        }
        const std::string why = argc < 2 ? "no job command given (cancel or reschedule)"
                                         : "unknown job command '" + std::string(argv[1]) + "'";
        std::fprintf(stderr, "%s\n%s", why.c_str(), usage);
        return 2;
    }
    const bool cancel = std::strcmp(argv[1], "cancel") == 0;
    args a(argc - 1, argv + 1, usage, help);
    const std::string url = a.required("--url");
    const std::string queue = a.required("--queue");
    const std::string id = a.required("--id");
    if (id.empty() || id.size() > 255) a.fail("--id needs 1 to 255 bytes");
    tarry::amqp::message copy;
    tarry::wall_time due{};
    if (!cancel) {
        if (a.has("--delay-ms") == a.has("--at")) a.fail("give one of --delay-ms and --at");
        due = due_time(a, std::chrono::system_clock::now());
        copy = tarry::amqp::message(a.required("--body"));
        if (auto headers = header_options(a); !headers.empty()) copy.properties.headers = std::move(headers);
    }
    a.finish();
    const auto broker = broker_of(a, url);

    // Written on the I/O thread, which with_broker joins before returning.
    tarry::amqp::diagnostics why;
    return with_broker(broker, program, [&](tarry::amqp::connection& conn) {
        tarry::publisher pub(conn);
        auto confirmed = cancel ? pub.async_cancel(queue, id, why, boost::asio::use_future)
                                : pub.async_reschedule(queue, id, tarry::job_schedule::at(due), std::move(copy),
                                                       why, boost::asio::use_future);
        const auto ec = wait_confirm(confirmed, program, cancel ? "the cancel" : "the reschedule");
        if (!ec) return 1;
        if (*ec == tarry::publish_errc::unroutable) {
            std::fprintf(stderr, "%s: %s\n%s: (queue '%s' must exist: start its worker first, which declares it)\n",
                         program, why.message.c_str(), program, queue.c_str());
            return 1;
        }
        if (*ec) {
            std::fprintf(stderr, "%s: %s failed: %s\n", program, cancel ? "the cancel" : "the reschedule",
                         why.message.c_str());
            return 1;
        }
        if (cancel) std::printf("cancelled %s in %s\n", id.c_str(), queue.c_str());
        else std::printf("rescheduled %s due %s in %s\n", id.c_str(), tarry::epoch_seconds_text(due).c_str(), queue.c_str());
        return 0;
    });
}

}  // namespace cli
