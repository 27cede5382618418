// The `publish` sample as a child process against the real broker: what it
// prints and writes when the job is confirmed, exit 1 with the reason when
// the queue does not exist, exit 2 with the usage on bad arguments.
#include "amqp_client.hpp"
#include "process.hpp"
#include "published_job.hpp"

#include <regex>

using namespace amqp_it;

namespace {

std::string publish_path() { return tarry_test::env("TARRY_BUILD_ROOT").value_or(".") + "/samples/publish"; }

tarry_test::process_result run_publish(std::vector<std::string> args) {
    args.insert(args.begin(), publish_path());
    return tarry_test::run_process(args, 30s);
}

}  // namespace

TEST_CASE("publish sample: a confirmed job prints its id, due time and queue and exits 0") {
    TARRY_REQUIRE_BROKER(url);
    check_publishes_as_printed(url, "pub-sample", run_publish);
}

TEST_CASE("publish sample: a queue that does not exist: exit 1, and it says so") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("pub-sample-missing");
    const auto r = run_publish({"--url", url, "--queue", q, "--id", "lost", "--delay-ms", "10"});
    CHECK_FALSE(r.timed_out);
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.find("queue '" + q + "' does not exist or is not bound") != std::string::npos, r.err);
    CHECK(r.out.empty());
}

TEST_CASE("publish sample: bad arguments exit 2 with the usage, before connecting") {
    // Nothing listens on port 9: a run that got as far as connecting would exit 1.
    const std::vector<std::string> base{"--url", "amqp://guest:guest@127.0.0.1:9/%2F", "--queue", "q",
                                        "--id", "x"};
    const std::vector<std::vector<std::string>> cases{
        {},                                            // neither --delay-ms nor --at
        {"--delay-ms", "1", "--at", "1767225600"},     // both
        {"--delay-ms", "soon"},                        // not a number
        {"--delay-ms", "-5"},                          // negative
        {"--delay-ms", "99999999999999999999999"},     // too far out
        {"--at", "-1"},                                // before 1970
        {"--at", "nan"},                               // not a number
        {"--at", "1e12"},                              // past the clock
        {"--delay-ms", "1", "--colour", "red"},        // unknown option
        {"--delay-ms"},                                // no value
    };
    for (const auto& extra : cases) {
        auto args = base;
        args.insert(args.end(), extra.begin(), extra.end());
        std::string line;
        for (const auto& a : extra) line += " " + a;
        CAPTURE(line);
        const auto r = run_publish(args);
        CHECK_MESSAGE(r.exit_code == 2, r.out << r.err);
        CHECK_MESSAGE(r.err.find("usage: publish") != std::string::npos, r.err);
        CHECK(r.out.empty());
    }
    const auto r = run_publish({"--url", "http://x", "--queue", "q", "--id", "x", "--delay-ms", "1"});
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find("bad --url") != std::string::npos, r.err);
}
