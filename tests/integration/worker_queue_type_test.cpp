// echo_worker's queue kind and declaring, against the real broker:
// --queue-type quorum declares every queue tarry uses as a quorum queue (a
// parked job comes back through a quorum wait queue, dead-lettered at least
// once), --no-declare attaches to queues someone else declared, where a
// declare with other arguments would fail with 406, and --delivery-limit
// keeps a job from being returned past a quorum queue's x-delivery-limit.
#include "consumer_topology.hpp"
#include "private_broker.hpp"
#include "worker_process.hpp"

#include <csignal>
#include <thread>

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
    CHECK(std::llabs(run.due() - micros_of_double(epoch(due))) <= 1);  // printed to the µs, as check_runs allows
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

TEST_CASE("fault: echo_worker --delivery-limit: stopped four times holding a job, never pushes it over the limit") {
    // A quorum queue with x-delivery-limit 2 drops a message returned more
    // often than that. Each worker here holds the job and is stopped
    // (SIGTERM gives held jobs back): with nacks alone the fourth return
    // would drop it. Told the limit, a worker gives back a job one return
    // from it as a confirmed copy instead, and the job runs once at the end.
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("limit");
    tarry::subscription_options o;
    o.queue = q;
    o.queue_type = tarry::queue_kind::quorum;
    auto topology = tarry::detail::consumer_topology(o);
    topology[0].arguments.set("x-delivery-limit", std::int64_t{2});
    {
        connected_client c(url);
        auto ch = c.open_channel();
        for (auto& queue : topology) value_of(ch.async_declare_queue(queue, use_future));
        publish_raw(confirm_channel(c), q, "L-1", {{"perform_job_at", epoch(sys::now() + 12s)}});
    }
    const std::vector<std::string> told{"--no-declare", "--delivery-limit", "2"};
    for (int round = 1; round <= 4; ++round) {
        CAPTURE(round);
        worker_process w(url, q, told);
        REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
        // Held once the queue has nothing ready.
        const auto deadline = steady::now() + 10s;
        while (ready_in(url, q) != 0 && steady::now() < deadline) std::this_thread::sleep_for(50ms);
        REQUIRE(ready_in(url, q) == 0);
        stop(w);
        w.read_rest(1s);
        // Given back at stop (a nack, or a copy at the limit); a delivery
        // that arrived one return from the limit was renewed first.
        std::size_t shutdown = 0;
        for (const auto& e : w.of("requeued")) shutdown += e.field("reason") == "shutdown";
        CHECK_MESSAGE(shutdown == 1, w.transcript());
    }
    worker_process last(url, q, told);
    REQUIRE_MESSAGE(last.wait_ready(), last.transcript());
    REQUIRE_MESSAGE(last.wait_count("run", 1, 20s), last.transcript());
    const auto run = last.of("run").front();
    CHECK(run.id() == "L-1");
    CHECK(run.at() >= run.due());
    stop(last);
}
