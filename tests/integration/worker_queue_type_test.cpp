// echo_worker's queue kind and declaring, against the real broker:
// --queue-type quorum declares every queue tarry uses as a quorum queue (a
// parked job comes back through a quorum wait queue, dead-lettered at least
// once), --no-declare attaches to queues someone else declared, where a
// declare with other arguments would fail with 406, and --delivery-limit
// keeps a job from being returned past a quorum queue's x-delivery-limit.
// A worker's topology as code: `tarry topology export --worker` imported as
// definitions is all --no-declare needs; `tarry topology verify --worker`
// names what is missing or different and changes nothing.
#include "consumer_topology.hpp"
#include "private_broker.hpp"
#include "tarry_tool.hpp"
#include "worker_process.hpp"

#include "tarry/consumer/worker_topology.hpp"

#include <fstream>

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

TEST_CASE("tarry topology export --worker: the definitions imported are all echo_worker --no-declare needs; "
          "verify finds every part the same") {
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    const auto q = unique_name("as-code");
    const std::vector<std::string> worker{"--worker", q, "--queue-type", "quorum", "--hold-horizon-ms", "1000"};
    auto export_args = std::vector<std::string>{"topology", "export"};
    export_args.insert(export_args.end(), worker.begin(), worker.end());
    export_args.insert(export_args.end(), {"--format", "definitions"});
    const auto exported = run_tarry(export_args);
    REQUIRE_MESSAGE(exported.exit_code == 0, exported.err);
    const std::string file = *dir + "/" + q + ".json";
    std::ofstream(file) << exported.out;
    const auto imported = tarry_test::private_broker::broker_ctl(*dir, {"import_definitions", file});
    REQUIRE_MESSAGE(imported.exit_code == 0, imported.out << imported.err);

    auto verify_args = std::vector<std::string>{"topology", "verify", "--url", url};
    verify_args.insert(verify_args.end(), worker.begin(), worker.end());
    const auto verified = run_tarry(verify_args);
    CHECK_MESSAGE(verified.exit_code == 0, verified.out << verified.err);
    CHECK(verified.out.find("ok           queue '" + q + "'") != std::string::npos);
    CHECK(verified.out.find("ok           queue '" + q + ".dead'") != std::string::npos);

    // A quorum worker that declares nothing: a job parked through an
    // imported wait queue comes back and runs.
    worker_process w(url, q, {"--no-declare", "--queue-type", "quorum", "--hold-horizon-ms", "1000"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    {
        connected_client c(url);
        publish_raw(confirm_channel(c), q, "imported-1", {{"perform_job_at", epoch(sys::now() + 2s)}});
    }
    REQUIRE_MESSAGE(w.wait_count("run", 1, 20s), w.transcript());
    CHECK(w.count("parked") >= 1);
    stop(w);
}

TEST_CASE("tarry topology verify --worker: a missing queue and an argument that differs are named, exit 1; nothing "
          "is created or changed") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("verify");
    const std::vector<std::string> worker{"--worker", q, "--hold-horizon-ms", "4000"};
    auto declare_args = std::vector<std::string>{"topology", "declare", "--url", url};
    declare_args.insert(declare_args.end(), worker.begin(), worker.end());
    const auto declared = run_tarry(declare_args);
    REQUIRE_MESSAGE(declared.exit_code == 0, declared.err);
    CHECK_MESSAGE(declared.out.find("the work queue " + q + " first") != std::string::npos, declared.out);
    auto verify_args = std::vector<std::string>{"topology", "verify", "--url", url};
    verify_args.insert(verify_args.end(), worker.begin(), worker.end());
    REQUIRE_MESSAGE(run_tarry(verify_args).exit_code == 0, run_tarry(verify_args).out);

    // The same options as the tool's, to find the names.
    tarry::subscription_options o;
    o.queue = q;
    o.hold_horizon = 4s;
    const auto t = tarry::worker_topology(o);
    REQUIRE(t.queues.size() >= 3);
    const std::string dead = t.queues[1].name, rung = t.queues[2].name;
    connected_client c(url);
    {
        auto ch = c.open_channel();
        value_of(ch.async_delete_queue(dead, {}, use_future));
        value_of(ch.async_delete_queue(rung, {}, use_future));
        auto other = t.queues[2];
        other.arguments.set("x-message-ttl", std::int64_t{123});  // not what the ladder says
        value_of(ch.async_declare_queue(other, use_future));
    }
    const auto found = run_tarry(verify_args);
    CHECK(found.exit_code == 1);
    CHECK_MESSAGE(found.out.find("missing      queue '" + dead + "'") != std::string::npos, found.out);
    CHECK_MESSAGE(found.out.find("differs      queue '" + rung + "'") != std::string::npos, found.out);
    CHECK_MESSAGE(found.out.find("x-message-ttl") != std::string::npos, found.out);
    CHECK_MESSAGE(found.out.find("ok           queue '" + q + "'") != std::string::npos, found.out);
    // Nothing created: the dead-letter queue is still missing.
    auto ch = c.open_channel();
    auto [ec, info] = wait(ch.async_declare_queue(passive_queue(dead), use_future));
    CHECK(ec == amqp::reply_code::not_found);
    // Nor changed: the wait queue still has the other TTL (a declare with
    // the ladder's would be refused).
    auto ch2 = c.open_channel();
    auto [ec2, info2] = wait(ch2.async_declare_queue(t.queues[2], use_future));
    CHECK(ec2 == amqp::reply_code::precondition_failed);
    auto cleanup = c.open_channel();
    for (const auto& part : t.queues) wait(cleanup.async_delete_queue(part.name, {}, use_future));
}

TEST_CASE("tarry topology: --worker's usage errors exit 2 with the reason") {
    const auto err_of = [](std::vector<std::string> args) {
        auto r = run_tarry(std::move(args));
        CHECK(r.exit_code == 2);
        return r.err;
    };
    CHECK(err_of({"topology", "export", "--worker", "q", "--strategy", "binary", "--format", "definitions"})
              .find("needs --parking cascade") != std::string::npos);
    CHECK(err_of({"topology", "export", "--worker", "q", "--parking", "tunnel", "--format", "definitions"})
              .find("--parking is ladder or cascade") != std::string::npos);
    CHECK(err_of({"topology", "export", "--worker", "q", "--parking", "cascade", "--format", "definitions"})
              .find("--strategy") != std::string::npos);
    CHECK(err_of({"topology", "export", "--events", "--strategy", "binary", "--levels", "3", "--unit-ms", "10",
                  "--format", "definitions"})
              .find("--events describes a worker: it needs --worker") != std::string::npos);
    CHECK(err_of({"topology", "export", "--worker", "", "--format", "definitions"}).find("--worker") !=
          std::string::npos);
    CHECK(err_of({"topology", "export", "--worker", "q", "--hold-horizon-ms", "soon", "--format", "definitions"})
              .find("--hold-horizon-ms") != std::string::npos);
    CHECK(err_of({"topology", "verify", "--url", "amqp://localhost", "--worker", "q", "--format", "definitions"})
              .find("verify prints one line per part") != std::string::npos);
    CHECK(err_of({"topology", "verify", "--worker", "q"}).find("--url is required") != std::string::npos);
}

TEST_CASE("tarry topology export --worker --parking cascade --events: the cascade, the delivery queue and the events "
          "exchange, as Terraform") {
    const auto r = run_tarry({"topology", "export", "--worker", "jobs", "--parking", "cascade", "--strategy", "binary",
                              "--levels", "3", "--unit-ms", "1000", "--events", "--format", "terraform"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    CHECK(r.out.find("\"name\": \"jobs\"") != std::string::npos);
    CHECK(r.out.find("\"name\": \"jobs.dead\"") != std::string::npos);
    CHECK(r.out.find("\"name\": \"tarry.events\"") != std::string::npos);
    CHECK(r.out.find("rabbitmq_binding") != std::string::npos);
    CHECK(r.out.find(".wait.") == std::string::npos);
}
