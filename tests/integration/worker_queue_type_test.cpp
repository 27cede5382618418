// echo_worker's queue kind and declaring, against the real broker:
// --queue-type quorum declares every queue tarry uses as a quorum queue (a
// parked job comes back through a quorum wait queue, dead-lettered at least
// once), and --no-declare attaches to queues someone else declared, where
// a declare with other arguments would fail with 406.
#include "private_broker.hpp"
#include "worker_process.hpp"

#include <csignal>

using namespace consumer_it;

namespace {

/// A URL nothing listens on, for runs that must stop before connecting.
const char* const nowhere_url = "amqp://guest:guest@127.0.0.1:9/%2F";

/// Declares `q` durable with no arguments (a classic queue), on a channel of
/// its own: the broker's error when the queue is of another kind.
std::error_code classic_declare(const std::string& url, const std::string& q) {
    connected_client c(url);
    auto ch = c.open_channel();
    auto o = queue_opts(q);
    o.durable = true;
    auto [ec, info] = wait(ch.async_declare_queue(o, use_future));
    return ec;
}

void stop(worker_process& w) {
    w.signal(SIGTERM);
    CHECK(w.wait_exit(30s) == 0);
}

}  // namespace

TEST_CASE("echo_worker --queue-type quorum: every queue is quorum; a parked job comes back and runs once, on time") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("quorum");
    // A 1 s hold horizon: a job due in 3 s is parked in a wait queue.
    worker_process w(url, q, {"--queue-type", "quorum", "--hold-horizon-ms", "1000"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    for (const auto& name : {q, q + ".dead", q + ".wait.500"}) {
        CAPTURE(name);
        // A classic declare of a quorum queue: 406 PRECONDITION_FAILED.
        CHECK(classic_declare(url, name));
    }
    const auto due = sys::now() + 3s;
    {
        connected_client c(url);
        publish_raw(confirm_channel(c), q, "Q-1", {{"perform_job_at", epoch(due)}});
    }
    REQUIRE_MESSAGE(w.wait_count("run", 1, 20s), w.transcript());
    CHECK(w.count("parked") >= 1);
    const auto run = w.of("run").front();
    CHECK(run.at() >= run.due());
    CHECK(run.due() == micros_of_double(epoch(due)));
    w.read_until([] { return false; }, 1s);  // nothing more comes
    CHECK(w.count("run") == 1);
    stop(w);
}

TEST_CASE("echo_worker --no-declare: attaches to quorum queues declared elsewhere; a classic declare is refused") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("attach");
    {  // someone else's topology: here, a quorum worker's
        worker_process setup(url, q, {"--queue-type", "quorum", "--hold-horizon-ms", "1000"});
        REQUIRE_MESSAGE(setup.wait_ready(), setup.transcript());
        stop(setup);
    }
    auto refused = tarry_test::run_process(
        {echo_worker_path(), "--url", url, "--queue", q, "--hold-horizon-ms", "1000"}, 30s);
    CHECK_MESSAGE(refused.exit_code == 1, refused.out << refused.err);
    CHECK_MESSAGE(refused.err.find(q) != std::string::npos, refused.err);
    CHECK_MESSAGE(refused.err.find("406") != std::string::npos, refused.err);

    worker_process w(url, q, {"--no-declare", "--hold-horizon-ms", "1000"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    {
        connected_client c(url);
        publish_raw(confirm_channel(c), q, "A-1", {{"perform_job_at", epoch(sys::now() + 2s)}});
    }
    REQUIRE_MESSAGE(w.wait_count("run", 1, 20s), w.transcript());
    CHECK(w.count("parked") >= 1);  // through the quorum wait queue it did not declare
    stop(w);
}

TEST_CASE("echo_worker --no-declare: a queue that does not exist stops the start, named, exit 1") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("missing");
    auto r = tarry_test::run_process({echo_worker_path(), "--url", url, "--queue", q, "--no-declare"}, 30s);
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.find(q) != std::string::npos, r.err);
    CHECK_MESSAGE(r.err.find("404") != std::string::npos, r.err);
    CHECK(r.out.find("ready") == std::string::npos);
}

TEST_CASE("echo_worker: a bad --queue-type, a value for --no-declare's place, a repeated option: exit 2") {
    // Refused before connecting.
    for (const auto& extra : std::vector<std::vector<std::string>>{
             {"--queue-type", "stream"}, {"--queue-type"}, {"--queue", "again"}}) {
        std::vector<std::string> argv{echo_worker_path(), "--url", nowhere_url, "--queue", "q"};
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto r = tarry_test::run_process(argv, 30s);
        CAPTURE(extra.front());
        CHECK_MESSAGE(r.exit_code == 2, r.out << r.err);
        CHECK(r.err.find("usage: echo_worker") != std::string::npos);
    }
}
