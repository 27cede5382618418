// Consuming lanes: the consumer subscribes on several channels, so the jobs
// it holds unacknowledged are spread over them (the broker settles an ack by
// walking its channel's unacknowledged list). Checked from the broker's own
// view (rabbitmqctl list_consumers / list_channels), and a graceful stop that
// gives every lane's held jobs back at once loses none.
#include "consumer_fixture.hpp"
#include "private_broker.hpp"

#include <map>
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

struct lane_view {
    std::size_t prefetch = 0;
    std::size_t unacked = 0;
};

// Per consuming channel of `queue`: its consumer's prefetch and how many
// deliveries the broker counts unacknowledged on it.
std::map<std::string, lane_view> lanes_of(const std::string& dir, const std::string& queue) {
    std::map<std::string, lane_view> lanes;
    for (const auto& row : ctl_rows(dir, {"list_consumers", "queue_name", "channel_pid", "prefetch_count"}))
        if (row.size() == 3 && row[0] == queue) lanes[row[1]].prefetch = std::stoul(row[2]);
    for (const auto& row : ctl_rows(dir, {"list_channels", "pid", "messages_unacknowledged"})) {
        if (row.size() != 2) continue;
        if (auto it = lanes.find(row[0]); it != lanes.end()) it->second.unacked = std::stoul(row[1]);
    }
    return lanes;
}

void wait_held(running_consumer& rc, std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (rc.worker.stats().held < n && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    REQUIRE(rc.worker.stats().held == n);
}

}  // namespace

TEST_CASE("lanes: one consumer per channel, held jobs spread over them within each prefetch") {
    TARRY_REQUIRE_BROKER(url);
    const auto dir = tarry_test::broker_dir();
    if (!dir) {
        MESSAGE("SKIPPED: TARRY_TEST_BROKER_DIR is not set");
        return;
    }
    connected_client c(url);
    auto o = options_for(unique_name("lanes"));
    o.channels = 4;
    o.max_held = 100;
    REQUIRE(o.effective_prefetch() == 42);  // ceil((100 + 4 + 64) / 4)
    running_consumer rc(url, o);
    auto ch = confirm_channel(c);
    const auto t0 = sys::now();
    for (int i = 0; i < 100; ++i)
        publish_raw(ch, o.queue, "l" + std::to_string(i), {{"perform_job_at", epoch(t0 + 4s)}});
    wait_held(rc, 100);

    const auto lanes = lanes_of(*dir, o.queue);
    REQUIRE(lanes.size() == 4);
    std::size_t unacked = 0;
    for (const auto& [pid, lane] : lanes) {
        CHECK(lane.prefetch == 42);
        CHECK(lane.unacked > 0);  // the broker dealt to every lane
        CHECK(lane.unacked <= 42);
        unacked += lane.unacked;
    }
    CHECK(unacked == 100);

    REQUIRE(rc.log.wait_count(kind::run, 100, 10s));
    std::set<std::string> ids;
    for (const auto& r : rc.log.of(kind::run)) {
        ids.insert(r.id);
        CHECK(r.at >= r.due);
    }
    CHECK(ids.size() == 100);
    rc.worker.stop();
    CHECK(rc.log.count(kind::run) == 100);  // each once
    CHECK(rc.worker.stats().requeued == 0);
    cleanup(c, o);
}

TEST_CASE("lanes: a graceful stop gives back every lane's held jobs, a job still running keeps its own") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto o = options_for(unique_name("lanes-stop"));
    o.channels = 3;
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
        wait_held(rc, 60);
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
    while (auto got = value_of(after.async_get(o.queue, true, use_future))) {
        back.insert(got->item.msg.properties.message_id.value_or(""));
    }
    CHECK(back.size() == 60);
    CHECK(back.count("slow") == 0);
    cleanup(c, o);
}
