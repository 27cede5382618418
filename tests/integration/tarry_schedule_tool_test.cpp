// `tarry schedule add|list|remove` as a child process against the real
// broker: what add leaves (the upsert entry in the control stream, the
// first occurrence in the queue), what list prints (one JSON line per live
// schedule, the latest spec of each), remove, their refusals and exit codes,
// and list and remove each returning within 500 ms on a local broker (the
// interface the README gives).
#include "amqp_client.hpp"
#include "control_entries.hpp"
#include "process.hpp"
#include "tarry_tool.hpp"
#include "published_job.hpp"

#include "tarry/contract/occurrence_headers.hpp"
#include "tarry/contract/schedule_headers.hpp"
#include "tarry/control/schedule_entry.hpp"
#include "tarry/periodic/occurrence.hpp"

#include <thread>

using namespace amqp_it;

namespace {

/// `tarry schedule list`'s lines, and how long it took.
struct listing {
    std::vector<std::string> lines;
    std::chrono::milliseconds took{};
};
listing list_schedules(const std::string& url, const std::string& queue) {
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_tarry({"schedule", "list", "--url", url, "--queue", queue});
    listing l;
    l.took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.err.empty());
    std::size_t at = 0;
    while (at < r.out.size()) {
        const auto nl = r.out.find('\n', at);
        REQUIRE(nl != std::string::npos);
        l.lines.push_back(r.out.substr(at, nl - at));
        at = nl + 1;
    }
    return l;
}

/// The schedule entries of `queue`'s control stream (read_stream_entries).
std::vector<tarry::control::schedule_entry> read_schedule_entries(client& c, const std::string& queue,
                                                                  std::size_t n) {
    return read_stream_entries<tarry::control::schedule_entry>(c, queue, n, tarry::control::read_schedule_entry);
}

}  // namespace

TEST_CASE("tarry schedule --help: the usage and what the commands do, exit 0; listed by tarry --help") {
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"schedule", "--help"}, std::vector<std::string>{"schedule", "add", "--help"}}) {
        const auto r = run_tarry(args);
        CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
        CHECK_MESSAGE(r.out.rfind("usage: tarry schedule add --url URL --queue Q --id ID (--every-ms N | --cron", 0) == 0,
                      r.out);
        CHECK_MESSAGE(r.out.find("tarry schedule list --url URL --queue Q\n") != std::string::npos, r.out);
        CHECK_MESSAGE(r.out.find("tarry schedule remove --url URL --queue Q --id ID\n") != std::string::npos, r.out);
        CHECK(r.err.empty());
    }
    const auto r = run_tarry({"--help"});
    CHECK_MESSAGE(r.out.find("\n  schedule ") != std::string::npos, r.out);
}

TEST_CASE("tarry schedule: bad arguments exit 2 with the reason and the usage, before connecting") {
    // Nothing listens here: a usage error must come first.
    const std::string url = "amqp://guest:guest@127.0.0.1:1/%2F";
    const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
        {{"schedule"}, "no schedule command given"},
        {{"schedule", "start"}, "unknown schedule command 'start'"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t"}, "give one of --every-ms and --cron"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t", "--every-ms", "5", "--cron", "* * * * *"},
         "give one of --every-ms and --cron"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t", "--cron", "61 * * * *"},
         "bad --cron: minute: '61' is not in 0-59"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t", "--cron", "@daily", "--tz", "Mars/Base"},
         "time zone 'Mars/Base' is not in the system's tz database"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t", "--every-ms", "1000", "--tz", "UTC"},
         "--tz applies to --cron only"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t", "--every-ms", "0"},
         "every: the interval must be above 0 ms"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", "t", "--every-ms", "10", "--misfire", "later"},
         "--misfire needs run-once, skip or catch-up"},
        {{"schedule", "add", "--url", url, "--queue", "q", "--id", std::string(231, 'x'), "--every-ms", "10"},
         "--id needs 1 to 230 bytes"},
        {{"schedule", "remove", "--url", url, "--queue", "q"}, "--id is required"},
        {{"schedule", "list", "--url", url}, "--queue is required"},
    };
    for (const auto& [args, reason] : cases) {
        const auto r = run_tarry(args);
        CHECK_MESSAGE(r.exit_code == 2, args.size() << " args: " << r.out << r.err);
        CHECK_MESSAGE(r.err.find(reason) != std::string::npos, r.err);
        CHECK_MESSAGE(r.err.find("usage: tarry schedule add") != std::string::npos, r.err);
        CHECK(r.out.empty());
    }
}

TEST_CASE("tarry schedule add: the upsert in the control stream and the first occurrence in the queue") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("tool-schedule");
    value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));
    control_stream_cleanup cleanup{c, q};
    const auto before = std::chrono::system_clock::now();
    const auto r = run_tarry({"schedule", "add", "--url", url, "--queue", q, "--id", "tick", "--every-ms", "60000",
                              "--offset-ms", "500", "--body", "beat", "--header", "tenant=acme"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out == "scheduled tick in " + q + ": every 60000ms+500ms\n");

    const auto entries = read_schedule_entries(c, q, 1);
    REQUIRE(entries.size() == 1);
    const auto* u = std::get_if<tarry::control::schedule_upsert>(&entries[0]);
    REQUIRE(u != nullptr);
    CHECK(u->schedule_id == "tick");
    CHECK(u->spec == "every 60000ms+500ms");
    CHECK(u->template_message.body_view() == "beat");

    const auto got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    const auto& m = got->item.msg;
    std::string why;
    const auto o = tarry::contract::read_occurrence(m.properties, why);
    REQUIRE_MESSAGE(o, why);
    CHECK(o->schedule_id == "tick");
    CHECK(o->number == 1);
    CHECK(o->spec == "every 60000ms+500ms");
    CHECK(m.properties.message_id == std::optional<std::string>(o->id()));
    CHECK(tarry::contract::read_generation(m.properties) == u->generation);
    CHECK(m.body_view() == "beat");
    CHECK(*m.properties.headers->find("tenant") == amqp::field_value("acme"));
    // Due at the first nominal time from the upsert: on the grid, within the minute after.
    const auto nominal = tarry::periodic::parse_nominal(o->nominal);
    REQUIRE(nominal);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(nominal->time_since_epoch()).count();
    CHECK(ms % 60000 == 500);
    CHECK(*nominal >= before - 1s);
    CHECK(*nominal <= before + 61s);
    CHECK(written_due(m) == ms * 1000);
}

TEST_CASE("tarry schedule list and remove: the live schedules with their latest spec, within 500 ms each") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("tool-schedule-list");
    value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));
    control_stream_cleanup cleanup{c, q};

    // No control stream yet: no schedules.
    auto l = list_schedules(url, q);
    CHECK(l.lines.empty());

    auto add = [&](std::vector<std::string> extra) {
        std::vector<std::string> args{"schedule", "add", "--url", url, "--queue", q};
        args.insert(args.end(), extra.begin(), extra.end());
        const auto r = run_tarry(args);
        REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
    };
    add({"--id", "b-nightly", "--cron", "30 2 * * *", "--tz", "Europe/Berlin", "--misfire", "skip"});
    add({"--id", "a-tick", "--every-ms", "1000"});
    add({"--id", "a-tick", "--every-ms", "2000"});  // an upsert: the latest spec wins

    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
    l = list_schedules(url, q);
    CHECK_MESSAGE(l.took < 500ms, l.took.count() << " ms");
    REQUIRE(l.lines.size() == 2);
    // By id; next_due is the next nominal time from now.
    CHECK(l.lines[0].rfind("{\"id\":\"a-tick\",\"spec\":\"every 2000ms\",\"next_due\":", 0) == 0);
    const auto due0 = std::stoll(l.lines[0].substr(l.lines[0].rfind(':') + 1));
    CHECK(due0 % 2 == 0);
    CHECK(due0 >= now_s);
    CHECK(due0 <= now_s + 4);
    CHECK(l.lines[1].rfind("{\"id\":\"b-nightly\",\"spec\":\"cron 30 2 * * * tz Europe/Berlin misfire skip\","
                           "\"next_due\":", 0) == 0);

    const auto start = std::chrono::steady_clock::now();
    const auto r = run_tarry({"schedule", "remove", "--url", url, "--queue", q, "--id", "a-tick"});
    const auto took = std::chrono::steady_clock::now() - start;
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out == "removed a-tick from " + q + "\n");
    CHECK_MESSAGE(took < 500ms, std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms");
    l = list_schedules(url, q);
    REQUIRE(l.lines.size() == 1);
    CHECK(l.lines[0].find("\"id\":\"b-nightly\"") != std::string::npos);

    // Removing an unknown id succeeds and changes nothing.
    const auto again = run_tarry({"schedule", "remove", "--url", url, "--queue", q, "--id", "never-was"});
    CHECK_MESSAGE(again.exit_code == 0, again.out << again.err);
    CHECK(list_schedules(url, q).lines.size() == 1);
}

TEST_CASE("tarry schedule add: ten concurrent upserts of one id leave one listed schedule, one of their specs") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("tool-schedule-race");
    value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));
    control_stream_cleanup cleanup{c, q};
    std::vector<std::thread> adders;
    std::vector<int> codes(10, -1);
    for (int i = 0; i < 10; ++i)
        adders.emplace_back([&, i] {
            codes[static_cast<std::size_t>(i)] =
                run_tarry({"schedule", "add", "--url", url, "--queue", q, "--id", "race", "--every-ms",
                           std::to_string(1000 * (i + 1))})
                    .exit_code;
        });
    for (auto& t : adders) t.join();
    for (const int code : codes) CHECK(code == 0);
    // The last written upsert is the one with the highest generation.
    const auto entries = read_schedule_entries(c, q, 10);
    REQUIRE(entries.size() == 10);
    const tarry::control::schedule_upsert* last = nullptr;
    for (const auto& e : entries) {
        const auto& u = std::get<tarry::control::schedule_upsert>(e);
        if (last == nullptr || u.generation > last->generation) last = &u;
    }
    const auto l = list_schedules(url, q);
    REQUIRE(l.lines.size() == 1);
    CHECK(l.lines[0].rfind("{\"id\":\"race\",\"spec\":\"" + last->spec + "\"", 0) == 0);
}

TEST_CASE("tarry schedule add: a queue that does not exist: exit 1, said so") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = unique_name("tool-schedule-missing");
    control_stream_cleanup cleanup{c, q};
    const auto r = run_tarry({"schedule", "add", "--url", url, "--queue", q, "--id", "t", "--every-ms", "1000"});
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.find("queue '" + q + "' must exist") != std::string::npos, r.err);
    CHECK(r.out.empty());
}
