// tarry publish: publishes one job and waits for the broker's confirm.
//
//   tarry publish --url URL --queue Q [--delay-ms N | --at EPOCH_S] [--id ID] [--body TEXT]
//                 [--park-beyond-ms N [--prefix P]]
//
// What the publish sample does (publish_job.hpp), with the schedule and the
// id optional: without --delay-ms and --at the job is due now; without --id
// its message_id is a random (version 4) UUID; with --park-beyond-ms, a job
// due beyond N ms waits in the delay cascade (publisher_options::park_beyond).
// Prints
// `published ID due EPOCH_S to Q`; exit 0 once confirmed, 1 when not
// published or not confirmed, 2 on bad arguments.
#include "command_args.hpp"
#include "commands.hpp"
#include "publish_job.hpp"

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>

#include <chrono>

namespace cli {

namespace {

const char* const usage =
    "usage: tarry publish --url URL --queue Q [--delay-ms N | --at EPOCH_S] [--id ID] [--body TEXT]\n"
    "                     [--park-beyond-ms N [--prefix P]]\n";

const char* const help =
    "Publishes one job to queue Q (the default exchange, routing key Q; the queue\n"
    "must exist) and waits for the broker's confirm.\n"
    "  --url URL       the broker: amqp://USER:PASS@HOST:PORT/VHOST, or amqps://\n"
    "  --queue Q       the queue the job goes to\n"
    "  --delay-ms N    due N milliseconds from now\n"
    "  --at EPOCH_S    due at this Unix time, in seconds (a fraction allowed)\n"
    "                  (neither: due now)\n"
    "  --id ID         the job's message_id (default: a random UUID, version 4)\n"
    "  --body TEXT     the job's body (default: empty)\n"
    "  --park-beyond-ms N  a job due more than N ms from now waits in the delay\n"
    "                  cascade and reaches Q 250 ms before it is due (the cascade\n"
    "                  must be declared: tarry topology declare)\n"
    "  --prefix P      the cascade's prefix (default: tarry.delay)\n"
    "Prints `published ID due EPOCH_S to Q` once confirmed.\n"
    "exit status: 0 confirmed; 1 not published or not confirmed (the reason on\n"
    "stderr); 2 bad arguments\n";

/// A message_id no other job has: a random (version 4) UUID.
std::string random_id() { return boost::uuids::to_string(boost::uuids::random_generator()()); }

}  // namespace

int publish_command(int argc, char** argv) {
    args a(argc, argv, usage, help);
    const std::string url = a.required("--url");
    job_to_publish job;
    job.queue = a.required("--queue");
    job.id = a.has("--id") ? a.required("--id") : random_id();
    if (a.has("--delay-ms") && a.has("--at")) a.fail("give at most one of --delay-ms and --at");
    // The due time is fixed here, so what is printed is what is written.
    const auto now = std::chrono::system_clock::now();
    job.due = (a.has("--delay-ms") || a.has("--at")) ? due_time(a, now) : now;
    job.body = a.text("--body", "");
    if (a.has("--prefix") && !a.has("--park-beyond-ms")) a.fail("--prefix goes with --park-beyond-ms");
    if (a.has("--park-beyond-ms")) job.park_beyond = a.millis("--park-beyond-ms", {});
    job.cascade_prefix = a.text("--prefix", job.cascade_prefix);
    a.finish();
    return publish_job(broker_of(a, url), job, "tarry publish");
}

}  // namespace cli
