// Partitions on a real cluster (issue "Partitions and a nemesis"): three
// nodes, each in a network namespace of its own (scripts/cluster --netns:
// net_ticktime 10, pause_minority), a quorum work queue led by node 1, two
// echo_worker processes attached through nodes 2 and 3 (heartbeat=5, every
// node's URL to fail over to), holding TARRY_PARTITION_JOBS jobs (default
// 10 000) due over the test, one in ten failing once and retried, a periodic
// schedule every second, and 100 jobs cancelled well before they are due.
// One fault per test: (a) the leader cut off from the other two nodes for
// 20 s, (b) worker A's node cut off from everything for 25 s, (c) worker A's
// node paused for 30 s, (d) the leader cut off for 4 s. Judged after the
// heal, by the workers' own events: 0 lost, 0 early, no run of a cancelled
// job, the periodic chain with no gap and no fork (no two consecutive
// occurrences run twice), every second run (of a job's attempt or an
// occurrence) explained by the fault (its first run began inside it), each
// worker consuming again in time.
// Needs root and iproute2 (network namespaces); suite `cluster`.
#include "consumer_topology.hpp"
#include "private_cluster.hpp"
#include "python_peer.hpp"
#include "worker_process.hpp"

#include "tarry/periodic/recurrence.hpp"
#include "tarry/publisher/publisher.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

using namespace consumer_it;

namespace {

std::size_t jobs_wanted() {
    const auto v = tarry_test::env("TARRY_PARTITION_JOBS");
    return v ? std::strtoull(v->c_str(), nullptr, 10) : 10000;
}

enum class fault_kind { leader_cut, worker_node_cut, worker_node_paused, leader_cut_short };

struct scenario {
    fault_kind kind;
    std::chrono::seconds length;
};

/// A worker attached through node `first`, with the other nodes' URLs to
/// fail over to (heartbeat 5 s on each).
std::unique_ptr<worker_process> worker_on(tarry_test::private_cluster& cluster, int first, const std::string& q) {
    std::vector<std::string> extra;
    for (int k = 1; k < 3; ++k) {
        extra.push_back("--url");
        extra.push_back(cluster.url((first - 1 + k) % 3 + 1) + "?heartbeat=5");
    }
    for (const char* a : {"--no-declare", "--workers", "8"}) extra.push_back(a);
    return std::make_unique<worker_process>(cluster.url(first) + "?heartbeat=5", q, extra);
}

/// When a worker's stderr last reported `consuming` (steady time), polled
/// while its output is pumped.
struct consuming_watch {
    std::size_t seen = 0;  // "connection consuming" lines so far
    std::optional<steady::time_point> last;
    void poll(const std::string& err) {
        std::size_t n = 0;
        for (auto at = err.find("connection consuming"); at != std::string::npos;
             at = err.find("connection consuming", at + 1))
            ++n;
        if (n > seen) {
            seen = n;
            last = steady::now();
        }
    }
};

void run_scenario(const scenario& s) {
    if (geteuid() != 0) {
        MESSAGE("skipped: network namespaces need root");
        return;
    }
    tarry_test::cluster_options co;
    co.netns = true;
    tarry_test::private_cluster cluster(co);
    const std::size_t n = jobs_wanted();
    const auto q = unique_name("partition");
    tarry::subscription_options o;
    o.queue = q;
    o.queue_type = tarry::queue_kind::quorum;
    connected_client c(cluster.url(1));
    {
        auto ch = c.open_channel();
        for (auto& queue : tarry::detail::consumer_topology(o)) value_of(ch.async_declare_queue(queue, use_future));
    }
    REQUIRE(cluster.leader(q) == 1);

    // Jobs due from 25 s on, over 45 s: held before the fault, due during and after it.
    const auto first_due = sys::now() + 25s;
    std::vector<sys::time_point> dues;
    for (std::size_t i = 0; i < n; ++i) dues.push_back(first_due + 45s * i / n);
    std::vector<sys::time_point> failing_dues, cancelled_dues;
    for (std::size_t i = 0; i < n / 10; ++i) failing_dues.push_back(first_due + 45s * i / (n / 10) + 3ms);
    for (std::size_t i = 0; i < 100; ++i) cancelled_dues.push_back(first_due + 20s + 20s * i / 100 + 7ms);
    amqp::field_table fail_once;
    fail_once.set("x-echo-fail", std::int64_t{1});
    publish_many(cluster.url(1), q, "J", dues);
    publish_many(cluster.url(1), q, "R", failing_dues, fail_once);
    publish_many(cluster.url(1), q, "C", cancelled_dues);

    std::vector<std::unique_ptr<worker_process>> workers;
    for (int node : {2, 3}) workers.push_back(worker_on(cluster, node, q));
    for (auto& w : workers) REQUIRE_MESSAGE(w->wait_ready(60s), w->transcript());
    tarry::publisher pub(c.conn);
    for (std::size_t i = 0; i < cancelled_dues.size(); ++i)
        ok(pub.async_cancel(q, "C-" + std::to_string(i), use_future));
    const auto every = tarry::periodic::parse_spec("every 1000ms");
    REQUIRE(every.spec);
    ok(pub.async_upsert_schedule(q, "beat", *every.spec, amqp::message("tick"), use_future));

    std::vector<consuming_watch> watch(workers.size());
    const std::function<void(std::size_t)> poll = [&](std::size_t i) { watch[i].poll(workers[i]->err_text()); };
    const auto pump = [&](std::chrono::milliseconds t) { pump_workers(workers, t, poll); };
    const auto pumping = [&](auto command) { return pump_workers_while(workers, std::move(command), poll); };
    pump(std::chrono::duration_cast<std::chrono::milliseconds>(first_due + 3s - sys::now()));
    const auto fault_start = micros(sys::now());
    const auto fault_steady = steady::now();
    const auto consuming_before = std::vector<std::size_t>{watch[0].seen, watch[1].seen};
    switch (s.kind) {
        case fault_kind::leader_cut:
        case fault_kind::leader_cut_short: pumping([&] { cluster.partition(1); }); break;
        case fault_kind::worker_node_cut: pumping([&] { cluster.partition(2, true); }); break;
        case fault_kind::worker_node_paused: pumping([&] { cluster.pause(2); }); break;
    }
    pump(std::chrono::duration_cast<std::chrono::milliseconds>(s.length - (steady::now() - fault_steady)));
    if (s.kind == fault_kind::worker_node_paused)
        pumping([&] { cluster.resume(2); });
    else
        pumping([&] { cluster.heal(); });
    const auto fault_end = micros(sys::now());

    // Until every job has run (or 150 s after the heal).
    const std::set<std::string> cancelled = [&] {
        std::set<std::string> ids;
        for (std::size_t i = 0; i < cancelled_dues.size(); ++i) ids.insert("C-" + std::to_string(i));
        return ids;
    }();
    const auto lost_now = [&] {
        std::set<std::string> succeeded;
        for (auto& w : workers)
            for (const auto& e : w->of("succeeded")) succeeded.insert(e.id());
        std::size_t lost = 0;
        for (std::size_t i = 0; i < n; ++i) lost += succeeded.count("J-" + std::to_string(i)) == 0;
        for (std::size_t i = 0; i < failing_dues.size(); ++i) lost += succeeded.count("R-" + std::to_string(i)) == 0;
        return lost;
    };
    const auto deadline = steady::now() + 150s;
    while (lost_now() > 0 && steady::now() < deadline) pump(1s);
    pump(3s);  // late second runs show up too
    const auto schedule_removed_s = std::chrono::duration_cast<std::chrono::seconds>(
                                        sys::now().time_since_epoch()).count();
    ok(pub.async_remove_schedule(q, "beat", use_future));

    // The verdicts.
    std::map<std::pair<std::string, std::int64_t>, std::vector<std::int64_t>> runs;  // (id, attempt) -> starts
    std::size_t early = 0, ran_cancelled = 0;
    std::map<std::int64_t, int> beats;
    for (auto& w : workers)
        for (const auto& e : w->of("run")) {
            if (e.at() < e.due()) ++early;
            if (cancelled.count(e.id())) ++ran_cancelled;
            if (e.id().rfind("beat@", 0) == 0) ++beats[std::stoll(e.id().substr(5))];
            const auto attempt = e.field("attempt");
            runs[{e.id(), attempt.empty() ? 1 : std::stoll(attempt)}].push_back(e.at());
        }
    // A second run is explained when the first began between the fault's
    // start (less the 10 s a cut takes to be noticed) and 30 s after its end.
    std::size_t explained = 0, unexplained = 0;
    for (auto& [key, starts] : runs) {
        if (starts.size() < 2) continue;
        std::sort(starts.begin(), starts.end());
        const bool in_window = starts.front() >= fault_start - 10'000'000 && starts.front() <= fault_end + 30'000'000;
        (in_window ? explained : unexplained) += starts.size() - 1;
    }
    std::size_t beat_gaps = 0;
    if (!beats.empty())
        beat_gaps = static_cast<std::size_t>(beats.rbegin()->first - beats.begin()->first + 1) - beats.size();
    const auto lost = lost_now();
    std::vector<double> again_s;
    for (std::size_t i = 0; i < workers.size(); ++i) {
        const bool reconnected = watch[i].seen > consuming_before[i];
        again_s.push_back(reconnected ? std::chrono::duration<double>(*watch[i].last - fault_steady).count() : 0.0);
    }
    MESSAGE("jobs " << n << " + " << failing_dues.size() << " failing once + " << cancelled.size()
                    << " cancelled; lost " << lost << ", early " << early << ", cancelled ran " << ran_cancelled
                    << ", second runs explained " << explained << ", unexplained " << unexplained << ", beats "
                    << beats.size() << " with " << beat_gaps << " gaps; consuming again after the fault's start: A "
                    << again_s[0] << " s, B " << again_s[1] << " s (0: never lost); the fault lasted "
                    << static_cast<double>(fault_end - fault_start) / 1e6 << " s");
    if (lost > 0)
        for (int node = 1; node <= 3; ++node)
            MESSAGE("node " << node << ": " << cluster.ctl(node, {"list_queues", "-q", "name", "messages_ready",
                                                                   "messages_unacknowledged", "consumers"}));
    CHECK(lost == 0);
    CHECK(early == 0);
    CHECK(ran_cancelled == 0);
    CHECK(unexplained == 0);
    CHECK(beat_gaps == 0);
    // ...and the chain went on to the end: its last occurrence ran within
    // 5 s of the schedule's removal.
    REQUIRE(!beats.empty());
    CHECK_MESSAGE(beats.rbegin()->first >= schedule_removed_s - 5,
                  "the chain stopped at beat@" << beats.rbegin()->first << ", " << schedule_removed_s - beats.rbegin()->first
                                               << " s before the schedule was removed");
    if (beats.rbegin()->first < schedule_removed_s - 5) {
        for (auto& w : workers) {
            std::string lines;
            std::size_t n = 0;
            for (auto it = w->events().rbegin(); it != w->events().rend() && n < 12; ++it)
                if (it->id().rfind("beat@", 0) == 0 || !it->field("reason").empty()) {
                    lines = it->raw + "\n" + lines;
                    ++n;
                }
            MESSAGE("a worker's last events of the schedule, or with a reason:\n" << lines << w->transcript());
        }
        MESSAGE("queues as node 2 lists them: "
                << cluster.ctl(2, {"list_queues", "-q", "name", "type", "leader", "online", "messages", "consumers"}));
    }
    // A second run of one occurrence is a second run like any job's (counted
    // above, explained by the fault when its first run began inside it); a
    // fork would run the next occurrences twice too: two successors.
    for (auto it = beats.begin(); it != beats.end(); ++it) {
        const auto next = std::next(it);
        if (next != beats.end())
            CHECK_MESSAGE(!(it->second > 1 && next->second > 1),
                          "a fork: beat@" << it->first << " and beat@" << next->first << " both ran twice");
    }
    // Worker A (node 2) cut off or paused: consuming again within its
    // heartbeat timeout (10 s) + 5 s; a worker of the majority within 5 s.
    const double a_bound = (s.kind == fault_kind::worker_node_cut || s.kind == fault_kind::worker_node_paused) ? 15 : 5;
    // On a failure, what each worker said of its connections (a loss, a
    // consumer the broker cancelled, a due-backlog pause's end) says why.
    const auto said = [&](std::size_t i) {
        std::string lines;
        std::istringstream err(workers[i]->err_text());
        for (std::string line; std::getline(err, line);)
            if (line.find("echo_worker: connection") != std::string::npos) lines += line + "\n";
        return lines;
    };
    CHECK_MESSAGE(again_s[0] <= a_bound,
                  "worker A consumed again " << again_s[0] << " s after the fault began; it said:\n" << said(0));
    CHECK_MESSAGE(again_s[1] <= 5,
                  "worker B consumed again " << again_s[1] << " s after the fault began; it said:\n" << said(1));
    for (auto& w : workers) {
        w->signal(SIGTERM);
        CHECK(w->wait_exit(60s) == 0);
    }
}

}  // namespace

TEST_CASE("partition (a): the node leading the work queue cut off from the other two for 20 s, then healed") {
    run_scenario({fault_kind::leader_cut, 20s});
}

TEST_CASE("partition (b): worker A's node cut off from the nodes and the clients for 25 s: A fails over, nothing "
          "stranded") {
    run_scenario({fault_kind::worker_node_cut, 25s});
}

TEST_CASE("partition (c): worker A's node paused for 30 s, then resumed") {
    run_scenario({fault_kind::worker_node_paused, 30s});
}

TEST_CASE("partition (d): the leader cut off for 4 s, then healed") { run_scenario({fault_kind::leader_cut_short, 4s}); }

namespace {

/// (ready, unacknowledged) of `q` as node `node` lists it; (-1, -1) when not listed.
std::pair<long, long> queue_counts(tarry_test::private_cluster& cluster, int node, const std::string& q) {
    std::istringstream lines(cluster.ctl(
        node, {"list_queues", "-q", "--no-table-headers", "name", "messages_ready", "messages_unacknowledged"}));
    std::string name;
    long ready = -1, unacked = -1;
    while (lines >> name >> ready >> unacked)
        if (name == q) return {ready, unacked};
    return {-1, -1};
}

}  // namespace

TEST_CASE("broker fact: a quorum queue gives back at once the deliveries of a consuming consumer whose node lost "
          "the leader; a cancelled one's it may strand") {
    // Why a lane holding jobs is never cancelled (docs/consumer.md, "Lanes").
    // A pika client on node 2 holds 100 deliveries of a queue led by node 1,
    // with its consumer cancelled or still consuming; node 2 is paused for
    // 30 s (the leader sees it go after net_ticktime, 10 s), the client is
    // killed meanwhile, node 2 resumes.
    if (geteuid() != 0) {
        MESSAGE("skipped: network namespaces need root");
        return;
    }
    tarry_test::cluster_options co;
    co.netns = true;
    // A cluster per case: on 4.0.5 the node paused in the first case, once
    // back, answered a consume of a queue declared after that with "no
    // queue" (404).
    for (const std::string mode : {"cancel", "consume"}) {
        tarry_test::private_cluster cluster(co);
        const auto q = unique_name("held-" + mode);
        tarry::subscription_options o;
        o.queue = q;
        o.queue_type = tarry::queue_kind::quorum;
        {
            connected_client c(cluster.url(1));
            auto ch = c.open_channel();
            value_of(ch.async_declare_queue(tarry::detail::consumer_topology(o).front(), use_future));
        }
        REQUIRE(cluster.leader(q) == 1);
        publish_many(cluster.url(1), q, "h", std::vector<sys::time_point>(100, sys::now()));
        tarry_test::child_process holder(tarry_test::python_argv("hold_deliveries.py", {cluster.url(2), q, "100", mode}));
        const auto said = holder.read_line(60s);
        REQUIRE_MESSAGE(said, holder.err_text());
        REQUIRE(said->rfind("holding 100", 0) == 0);
        // The broker's counts lag a few seconds behind.
        const std::pair<long, long> all_held{0, 100}, all_back{100, 0};
        std::pair<long, long> counts = queue_counts(cluster, 1, q);
        for (const auto until = steady::now() + 30s; counts != all_held && steady::now() < until;) {
            std::this_thread::sleep_for(1s);
            counts = queue_counts(cluster, 1, q);
        }
        REQUIRE_MESSAGE(counts == all_held, counts.first << " ready, " << counts.second << " unacknowledged while held");
        cluster.pause(2);
        std::this_thread::sleep_for(5s);
        holder.signal(SIGKILL);
        holder.wait_exit(10s);
        std::this_thread::sleep_for(25s);
        cluster.resume(2);
        const auto until = steady::now() + 45s;
        do {
            std::this_thread::sleep_for(1s);
            counts = queue_counts(cluster, 1, q);
        } while (counts.first != 100 && steady::now() < until);
        MESSAGE(mode << ": ready " << counts.first << ", unacknowledged " << counts.second
                     << " after the client's node came back");
        // A consuming consumer's deliveries always come back. A cancelled
        // one's are stranded when the leader learns of the node's loss
        // before the channel's own end (every run until 2026-11-28), and
        // come back when the channel's end wins the race (one 3.10.8 run
        // that day): either way tarry keeps its lanes consuming, so the
        // consume case is what it rests on; the cancel case is told.
        if (mode == "consume") {
            CHECK(counts == all_back);
        } else {
            CHECK((counts == all_held || counts == all_back));
            const std::string how = counts == all_held ? "stranded (the broker's gap tarry avoids)" : "given back this time";
            MESSAGE("cancel: " << how);
        }
    }
}
