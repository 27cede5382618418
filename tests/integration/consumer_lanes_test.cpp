// Lanes: the newest lane hands over once it holds its share, and the old
// one goes on consuming (its prefetch ends its intake), so the jobs held
// unacknowledged are spread over several channels (the broker settles an
// ack by walking its channel's unacknowledged list) and every channel that
// holds jobs keeps its consumer.
// Checked from the broker's own view (rabbitmqctl list_connections /
// list_channels), and a graceful stop that gives every lane's held jobs back
// at once loses none.
#include "consumer_fixture.hpp"
#include "private_broker.hpp"

#include <set>
#include <sstream>

using namespace consumer_it;

namespace {

std::vector<std::vector<std::string>> rows_of(const std::string& out) {
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> cells;
        std::istringstream fields(line);
        for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
        if (!cells.empty()) rows.push_back(std::move(cells));
    }
    return rows;
}

// rabbitmqctl's table, without headers, as rows of cells.
std::vector<std::vector<std::string>> ctl_rows(const std::string& dir, std::vector<std::string> args) {
    args.push_back("--no-table-headers");
    args.push_back("--quiet");
    auto r = tarry_test::private_broker::broker_ctl(dir, args);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return rows_of(r.out);
}

struct channel_view {
    std::size_t consumers = 0;
    std::size_t unacked = 0;
};

// The channels of the connections whose name contains `name` (the consumer's
// own, and the one it publishes copies on), as the broker counts them.
std::vector<channel_view> channels_of(const std::string& dir, const std::string& name) {
    const auto found = tarry_test::private_broker::connection_pids(dir, name);
    REQUIRE_MESSAGE(!found.empty(), "no connection named " << name);
    const std::set<std::string> pids(found.begin(), found.end());
    std::vector<channel_view> out;
    for (const auto& row : ctl_rows(dir, {"list_channels", "connection", "consumer_count", "messages_unacknowledged"}))
        if (row.size() == 3 && pids.count(row[0]) != 0) out.push_back({std::stoul(row[1]), std::stoul(row[2])});
    return out;
}

}  // namespace

TEST_CASE("lanes: a lane hands over once it holds its share, and goes on consuming: no lane holding jobs is "
          "without its consumer") {
    // A quorum queue keeps a cancelled consumer's deliveries checked out
    // when the consumer's node loses the queue's leader, and never gives
    // them back: so a lane that holds jobs keeps its consumer.
    TARRY_REQUIRE_BROKER(url);
    TARRY_REQUIRE_BROKER_DIR(dir);
    connected_client c(url);
    auto o = options_for(unique_name("lanes"));
    o.channels = 4;
    o.max_held = 100;
    REQUIRE(o.lane_hold() == 25);
    auto cfg = config_of(url);
    cfg.connection_name = unique_name("lanes-consumer");
    running_consumer rc(cfg, o);
    auto ch = confirm_channel(c);
    // Due late enough that the broker's view below (two rabbitmqctl calls,
    // seconds each on a loaded machine) is taken while all 100 are held.
    const auto due = sys::now() + 15s;
    for (int batch = 0; batch < 4; ++batch) {
        for (int i = 0; i < 25; ++i)
            publish_raw(ch, o.queue, "l" + std::to_string(batch * 25 + i), {{"perform_job_at", epoch(due)}});
        REQUIRE(wait_held(rc, 25 * (batch + 1)));
    }
    REQUIRE(wait_stats(rc, [&](const tarry::consumer_stats& s) { return s.lane_changes >= 1; }));
    // Broker's view: every channel holding deliveries has its consumer; the
    // 100 unacknowledged deliveries are spread over more than one lane.
    std::size_t consumers = 0, unacked = 0, lanes = 0;
    for (const auto& chv : channels_of(*dir, cfg.connection_name)) {
        consumers += chv.consumers;
        unacked += chv.unacked;
        if (chv.unacked == 0) continue;
        ++lanes;
        CHECK_MESSAGE(chv.consumers == 1, "a channel holding " << chv.unacked << " deliveries has no consumer");
    }
    REQUIRE_MESSAGE(sys::now() < due, "the broker's view came after the jobs fell due: too slow to judge");
    CHECK(unacked == 100);
    CHECK(lanes >= 2);
    CHECK(consumers == rc.worker.stats().lane_changes + 1);  // each hand-over added a consuming lane

    REQUIRE(rc.log.wait_count(kind::run, 100, 25s));
    std::set<std::string> ids;
    for (const auto& r : rc.log.of(kind::run)) {
        ids.insert(r.id);
        CHECK(r.at >= r.due);
        CHECK(lateness_ms(r) < 250);
    }
    CHECK(ids.size() == 100);
    // Every lane settled its jobs: nothing is left unacknowledged.
    std::this_thread::sleep_for(300ms);
    std::size_t left = 0;
    for (const auto& chv : channels_of(*dir, cfg.connection_name)) left += chv.unacked;
    CHECK(left == 0);
    rc.worker.stop();
    CHECK(rc.log.count(kind::run) == 100);  // each once
    CHECK(rc.worker.stats().requeued == 0);
    // Handing over is no loss: nothing was dropped.
    CHECK(rc.log.count(kind::dropped) == 0);
    CHECK(rc.worker.stats().channel_losses == 0);
    cleanup(c, o);
}

TEST_CASE("lanes: a graceful stop gives back every lane's held jobs, a job still running keeps its own") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("lanes-stop"));
    o.channels = 3;
    o.max_held = 60;  // three lanes of 20
    o.shutdown_grace = 3s;
    auto ch = confirm_channel(c);
    const auto t0 = sys::now();
    std::atomic<bool> slow_started{false};
    {
        running_consumer rc(url, o, [&](const tarry::job& j) {
            if (j.id() == "slow") {
                slow_started = true;
                std::this_thread::sleep_for(700ms);
            }
            return tarry::job_outcome::success();
        });
        publish_raw(ch, o.queue, "slow", {});
        for (int i = 0; i < 60; ++i)
            publish_raw(ch, o.queue, "h" + std::to_string(i), {{"perform_job_at", epoch(t0 + 10min)}});
        REQUIRE(wait_held(rc, 60));
        REQUIRE(rc.log.wait_count(kind::run, 1, 5s));
        REQUIRE(slow_started);
        // Stops while "slow" runs: its lane has one delivery besides the
        // held ones, which must not be given back with them.
        rc.worker.stop();
        CHECK(rc.log.find(kind::succeeded, "slow"));
        CHECK(rc.log.count(kind::requeued) == 60);
        CHECK(rc.worker.stats().requeued == 60);
    }
    // All 60 are ready in the queue again; "slow" was acknowledged, not requeued.
    auto after = c.open_channel();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    std::uint32_t ready = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        ready = value_of(after.async_declare_queue(passive_queue(o.queue), use_future)).message_count;
        if (ready == 60) break;
        std::this_thread::sleep_for(20ms);
    }
    CHECK(ready == 60);
    std::set<std::string> back;
    while (auto got = value_of(after.async_get(o.queue, {.no_ack = true}, use_future))) {
        back.insert(got->item.msg.properties.message_id.value_or(""));
    }
    CHECK(back.size() == 60);
    CHECK(back.count("slow") == 0);
    cleanup(c, o);
}
