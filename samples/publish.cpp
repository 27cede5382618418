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
// on stderr), 2 on bad arguments (with the usage). `tarry publish` does the
// same with the schedule and the id optional (tools/publish_command.cpp).
#include "command_args.hpp"
#include "publish_job.hpp"

#include <chrono>

namespace {

const char* const usage =
    "usage: publish --url URL --queue Q --id ID (--delay-ms N | --at EPOCH_S) [--body TEXT]\n";

}  // namespace

int main(int argc, char** argv) {
    cli::args args(argc, argv, usage);
    const std::string url = args.required("--url");
    cli::job_to_publish job;
    job.queue = args.required("--queue");
    job.id = args.required("--id");
    if (args.has("--delay-ms") == args.has("--at")) args.fail("give exactly one of --delay-ms and --at");
    // The due time is fixed here, so what is printed is what is written.
    job.due = cli::due_time(args, std::chrono::system_clock::now());
    job.body = args.text("--body", "");
    args.finish();
    const auto broker = cli::broker_of(args, url);
    return cli::publish_job(broker, job, "publish");
}
