// The whole system under a node's fault, on a three-node RabbitMQ cluster of
// the test's own (scripts/cluster) with quorum queues: echo_worker processes
// connected to the other nodes while the node leading the work queue is
// killed (SIGKILL) mid-load, then restarted. Counted as docs/reliability.md
// says: in = ran + dead-lettered, lost = 0, early = 0 (by the wall clock), a
// second run allowed only for a job whose first run started before the
// fault. At full load in `make test-cluster` (TARRY_CLUSTER_JOBS sets the
// load, default 10 000); `make test` runs it with 1 000 jobs
// (cluster_faults_short, about 85 s with the nodes' boot).
#include "consumer_topology.hpp"
#include "private_cluster.hpp"
#include "worker_process.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>

using namespace consumer_it;

namespace {

std::size_t jobs_wanted() {
    const auto v = tarry_test::env("TARRY_CLUSTER_JOBS");
    return v ? std::strtoull(v->c_str(), nullptr, 10) : 10000;
}

struct tally {
    std::size_t jobs = 0, ran = 0, dead = 0, lost = 0, early = 0, allowed_duplicates = 0, defects = 0;
    double late_p50_ms = 0, late_p99_ms = 0, late_max_ms = 0;  // each run's start after its due
    // Runs that started over 1 s late, told apart: their job's delivery was
    // dropped first (its channel lost, redelivered), or it was held throughout;
    // and when the first and last of them started, after the fault.
    std::size_t late_after_drop = 0, late_held = 0;
    double late_first_s = 0, late_last_s = 0;
};

/// Every run and dead letter the workers printed, counted against the jobs.
tally count(const std::vector<const worker_process*>& workers, std::size_t jobs, std::int64_t fault_micros) {
    std::map<std::string, std::vector<std::int64_t>> runs;  // id -> start times
    std::set<std::string> dead, dropped;
    tally t;
    t.jobs = jobs;
    for (const auto* w : workers) {
        for (const auto& e : w->of("run")) {
            runs[e.id()].push_back(e.at());
            if (e.at() < e.due()) ++t.early;
        }
        for (const auto& e : w->of("dead")) dead.insert(e.id());
        for (const auto& e : w->of("dropped")) dropped.insert(e.id());
    }
    for (auto& [id, at] : runs) {
        std::sort(at.begin(), at.end());
        if (at.size() > 1) (at.front() < fault_micros ? t.allowed_duplicates : t.defects) += at.size() - 1;
    }
    t.ran = runs.size();
    std::vector<double> late;
    std::vector<std::int64_t> late_starts;
    for (const auto* w : workers)
        for (const auto& e : w->of("run")) {
            late.push_back(static_cast<double>(e.at() - e.due()) / 1000.0);
            if (e.at() - e.due() <= 1'000'000) continue;
            ++(dropped.count(e.id()) ? t.late_after_drop : t.late_held);
            late_starts.push_back(e.at() - fault_micros);
        }
    if (!late_starts.empty()) {
        const auto [first, last] = std::minmax_element(late_starts.begin(), late_starts.end());
        t.late_first_s = static_cast<double>(*first) / 1e6;
        t.late_last_s = static_cast<double>(*last) / 1e6;
    }
    std::sort(late.begin(), late.end());
    if (!late.empty()) {
        t.late_p50_ms = late[late.size() / 2];
        t.late_p99_ms = late[late.size() * 99 / 100];
        t.late_max_ms = late.back();
    }
    t.dead = dead.size();
    for (std::size_t i = 0; i < jobs; ++i) {
        const auto id = "F-" + std::to_string(i);
        if (!runs.count(id) && !dead.count(id)) ++t.lost;
    }
    return t;
}

}  // namespace

TEST_CASE("cluster: the work queue's leader killed mid-load and restarted: nothing lost, nothing early") {
    tarry_test::private_cluster cluster;
    const std::size_t n = jobs_wanted();
    const auto q = unique_name("leader-kill");
    tarry::subscription_options o;
    o.queue = q;
    o.queue_type = tarry::queue_kind::quorum;
    {  // declared through node 1, which leads it
        connected_client c(cluster.url(1));
        auto ch = c.open_channel();
        for (auto& queue : tarry::detail::consumer_topology(o)) value_of(ch.async_declare_queue(queue, use_future));
    }
    const int leader = cluster.leader(q);
    std::vector<int> others;
    for (int i = 1; i <= 3; ++i)
        if (i != leader) others.push_back(i);
    const auto first_due = sys::now() + 30s;
    std::vector<sys::time_point> dues;
    for (std::size_t i = 0; i < n; ++i) dues.push_back(first_due + 10s * i / n);
    publish_many(cluster.url(others[0]), q, "F", dues);

    std::vector<std::unique_ptr<worker_process>> workers;
    for (int node : others)
        workers.push_back(std::make_unique<worker_process>(cluster.url(node), q,
                                                           std::vector<std::string>{"--no-declare", "--workers", "8"}));
    for (auto& w : workers) REQUIRE_MESSAGE(w->wait_ready(), w->transcript());
    const auto pump = [&](std::chrono::milliseconds t) { pump_workers(workers, t); };
    // A cluster command (a kill, a restart, rabbitmqctl) takes seconds; the
    // workers' output is read meanwhile.
    const auto pumping = [&](auto command) { return pump_workers_while(workers, std::move(command)); };
    // Mid-load: 2 s into the runs, the leader dies; 5 s later it is restarted.
    pump(std::chrono::duration_cast<std::chrono::milliseconds>(first_due + 2s - sys::now()));
    // What the broker still has to deliver (ready) and has delivered but not
    // had settled (unacked), as a surviving node sees it: before the kill, and
    // 3 s into the outage.
    const auto queue_counts = [&] {
        const auto out = pumping([&] {
            return cluster.ctl(others[0], {"list_queues", "-q", "--no-table-headers", "name", "messages_ready",
                                           "messages_unacknowledged"});
        });
        const auto at = out.find(q + "\t");
        return at == std::string::npos ? std::string("(not listed)") : out.substr(at, out.find('\n', at) - at);
    };
    const auto before_kill = queue_counts();
    const auto fault = micros(sys::now());
    pumping([&] { cluster.kill(leader); });
    pump(3s);
    const auto during_outage = queue_counts();
    pump(2s);
    pumping([&] { cluster.restart(leader); });
    const double back_s = static_cast<double>(micros(sys::now()) - fault) / 1e6;
    const auto deadline = steady::now() + 120s;
    std::vector<const worker_process*> ws;
    for (auto& w : workers) ws.push_back(w.get());
    tally t;
    do {
        pump(1s);
        t = count(ws, n, fault);
    } while (t.lost > 0 && steady::now() < deadline);
    pump(2s);  // a late second run shows up too
    t = count(ws, n, fault);
    MESSAGE("jobs " << t.jobs << ", ran " << t.ran << ", dead " << t.dead << ", lost " << t.lost << ", early "
                    << t.early << ", duplicates of runs begun before the fault " << t.allowed_duplicates
                    << ", other second runs " << t.defects << "; lateness p50 / p99 / max " << t.late_p50_ms
                    << " / " << t.late_p99_ms << " / " << t.late_max_ms << " ms (leader was node " << leader
                    << "); runs over 1 s late: " << t.late_after_drop << " after their delivery was dropped, "
                    << t.late_held << " held throughout, started " << t.late_first_s << " to " << t.late_last_s
                    << " s after the kill; the node was back " << back_s << " s after it; queue, ready, unacked: "
                    << before_kill << " before the kill, " << during_outage << " 3 s after it");
    CHECK(t.lost == 0);
    CHECK(t.early == 0);
    CHECK(t.defects == 0);
    CHECK(t.ran + t.dead == n);
    for (auto& w : workers) {
        w->signal(SIGTERM);
        CHECK(w->wait_exit(60s) == 0);
    }
}
