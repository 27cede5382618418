// tarry schedule: periodic schedules of a queue, through its control stream
// (docs/periodic.md).
//
//   tarry schedule add --url URL --queue Q --id ID (--every-ms N | --cron "EXPR" [--tz ZONE])
//                      [--body TEXT] [--header K=V]... [--offset-ms N] [--start EPOCH_S]
//                      [--end EPOCH_S] [--limit N] [--run-now]
//                      [--misfire run-once|skip|catch-up] [--catch-up-limit N]
//                      [--misfire-threshold-ms N]
//   tarry schedule list --url URL --queue Q
//   tarry schedule remove --url URL --queue Q --id ID
//
// add upserts the schedule and publishes its first occurrence; list prints
// one JSON object per line ({"id":..,"spec":..,"next_due":..}); remove
// appends a removal. Exit 0 once done (confirmed, or read to the end), 1
// when not, 2 on bad arguments.
#include "broker_session.hpp"
#include "command_args.hpp"
#include "commands.hpp"
#include "publish_job.hpp"

#include "tarry/consumer/job_event_json.hpp"  // json_quoted
#include "tarry/periodic/occurrence.hpp"
#include "tarry/periodic/recurrence.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/use_future.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>

namespace cli {

namespace {

const char* const usage =
    "usage: tarry schedule add --url URL --queue Q --id ID (--every-ms N | --cron \"EXPR\" [--tz ZONE])\n"
    "                          [--body TEXT] [--header K=V]... [--offset-ms N] [--start EPOCH_S]\n"
    "                          [--end EPOCH_S] [--limit N] [--run-now]\n"
    "                          [--misfire run-once|skip|catch-up] [--catch-up-limit N]\n"
    "                          [--misfire-threshold-ms N]\n"
    "       tarry schedule list --url URL --queue Q\n"
    "       tarry schedule remove --url URL --queue Q --id ID\n";

const char* const help =
    "Periodic jobs of queue Q (docs/periodic.md). Each occurrence reaches Q as an\n"
    "ordinary job, message_id ID@<nominal epoch seconds>, and the worker that runs it\n"
    "publishes the next; any number of workers, one occurrence at a time. The\n"
    "schedules live in Q's control stream, Q.tarry.control.\n"
    "  add       upserts schedule ID (a new spec replaces the old one and starts\n"
    "            a new chain) and publishes its first occurrence\n"
    "  list      prints each live schedule as a JSON line: id, spec, next_due (the\n"
    "            next nominal time from now, epoch seconds, or null)\n"
    "  remove    removes schedule ID: its queued or held occurrences are dropped\n"
    "  --url URL               the broker: amqp://USER:PASS@HOST:PORT/VHOST, or amqps://\n"
    "  --queue Q               the queue its occurrences go to\n"
    "  --id ID                 the schedule's id (1 to 230 bytes)\n"
    "  --every-ms N            every N ms, aligned to the Unix epoch (UTC)\n"
    "  --offset-ms N           ... plus N ms (0 <= N < the interval)\n"
    "  --cron \"EXPR\"           a cron expression: 5 fields, or 6 with seconds first\n"
    "  --tz ZONE               the cron's time zone (tz database name; default UTC)\n"
    "  --body TEXT             each occurrence's body (default empty)\n"
    "  --header K=V            a header of each occurrence (a string); may be repeated\n"
    "  --start / --end EPOCH_S no occurrence before / after this Unix time\n"
    "  --limit N               at most N occurrences\n"
    "  --run-now               the first occurrence runs now, not at the next nominal time\n"
    "  --misfire POLICY        an occurrence found over the threshold late: run-once\n"
    "                          (default), skip, or catch-up (at most --catch-up-limit, 10)\n"
    "  --misfire-threshold-ms N  how late is a misfire (default 60000)\n"
    "exit status: 0 done; 1 not done or not confirmed (the reason on stderr); 2 bad\n"
    "arguments\n";

/// The schedule an add asks for; a usage error when it is not one.
tarry::periodic::schedule_spec spec_of(args& a) {
    namespace periodic = tarry::periodic;
    periodic::schedule_spec spec;
    if (a.has("--every-ms") == a.has("--cron")) a.fail("give one of --every-ms and --cron");
    if (a.has("--every-ms")) {
        if (a.has("--tz")) a.fail("--tz applies to --cron only (--every-ms is aligned to UTC)");
        spec.when = periodic::every_interval{a.millis("--every-ms", {}), a.millis("--offset-ms", {})};
    } else {
        if (a.has("--offset-ms")) a.fail("--offset-ms applies to --every-ms only");
        auto cron = periodic::parse_cron(a.required("--cron"));
        if (!cron.expression) a.fail("bad --cron: " + cron.detail);
        spec.when = std::move(*cron.expression);
        spec.time_zone = a.text("--tz", "UTC");
    }
    const auto epoch = [&](const char* name) {
        return tarry::wall_time(std::chrono::duration_cast<tarry::wall_time::duration>(
            std::chrono::duration<double>(a.real(name))));
    };
    if (a.has("--start")) spec.start = epoch("--start");
    if (a.has("--end")) spec.end = epoch("--end");
    if (a.has("--limit")) spec.limit = a.number("--limit", 0);
    spec.run_now = a.flag("--run-now");
    const std::string misfire = a.text("--misfire", "run-once");
    if (misfire == "skip") spec.misfire = periodic::misfire_policy::skip;
    else if (misfire == "catch-up") spec.misfire = periodic::misfire_policy::catch_up;
    else if (misfire != "run-once") a.fail("--misfire needs run-once, skip or catch-up, not '" + misfire + "'");
    if (a.has("--catch-up-limit")) {
        if (spec.misfire != periodic::misfire_policy::catch_up) a.fail("--catch-up-limit needs --misfire catch-up");
        spec.catch_up_limit = static_cast<std::uint32_t>(a.number("--catch-up-limit", 10));
    }
    spec.misfire_threshold = a.millis("--misfire-threshold-ms", spec.misfire_threshold);
    if (auto compiled = periodic::make_recurrence(spec); !compiled.schedule) a.fail("bad schedule: " + compiled.detail);
    return spec;
}

/// One line of `list`.
std::string listing_line(const tarry::control::schedule_upsert& u, tarry::wall_time now) {
    namespace periodic = tarry::periodic;
    std::string next = "null";
    if (const auto spec = periodic::parse_spec(u.spec); spec.spec)
        if (const auto r = periodic::make_recurrence(*spec.spec); r.schedule)
            if (const auto n = r.schedule->next_after(now)) next = periodic::format_nominal(*n);
    return "{\"id\":" + tarry::json_quoted(u.schedule_id) + ",\"spec\":" + tarry::json_quoted(u.spec) + ",\"next_due\":" + next + "}";
}

}  // namespace

int schedule_command(int argc, char** argv) {
    const char* const program = "tarry schedule";
    const std::string verb = argc >= 2 ? argv[1] : "";
    if (verb != "add" && verb != "list" && verb != "remove") {
        if (verb == "--help" || verb == "-h") {
            std::fputs(usage, stdout);
            std::fputs(help, stdout);
            return 0;
        }
        const std::string why = verb.empty() ? "no schedule command given (add, list or remove)"
                                             : "unknown schedule command '" + verb + "'";
        std::fprintf(stderr, "%s\n%s", why.c_str(), usage);
        return 2;
    }
    args a(argc - 1, argv + 1, usage, help, {"--run-now"});
    const std::string url = a.required("--url");
    const std::string queue = a.required("--queue");
    std::string id;
    tarry::periodic::schedule_spec spec;
    tarry::amqp::message occurrence;
    if (verb != "list") {
        id = a.required("--id");
        if (id.empty() || id.size() > 230) a.fail("--id needs 1 to 230 bytes");
    }
    if (verb == "add") {
        spec = spec_of(a);
        occurrence = tarry::amqp::message(a.text("--body", ""));
        if (auto headers = header_options(a); !headers.empty()) occurrence.properties.headers = std::move(headers);
    }
    a.finish();
    const auto broker = broker_of(a, url);

    // Written on the I/O thread, which with_broker joins before returning.
    tarry::amqp::diagnostics why;
    return with_broker(broker, program, [&](tarry::amqp::connection& conn) {
        tarry::publisher pub(conn);
        if (verb == "list") {
            auto listed = pub.async_list_schedules(queue, confirm_wait, why, boost::asio::use_future);
            if (listed.wait_for(confirm_wait + std::chrono::seconds(1)) != std::future_status::ready) {
                std::fprintf(stderr, "%s: the control stream was not read in time\n", program);
                return 1;
            }
            const auto [ec, schedules] = listed.get();
            if (ec) {
                std::fprintf(stderr, "%s: cannot list the schedules of '%s': %s\n", program, queue.c_str(),
                             why.message.c_str());
                return 1;
            }
            const auto now = std::chrono::system_clock::now();
            for (const auto& u : schedules) std::printf("%s\n", listing_line(u, now).c_str());
            return 0;
        }
        const bool add = verb == "add";
        const std::string text = add ? tarry::periodic::to_string(spec) : std::string();
        auto confirmed = add ? pub.async_upsert_schedule(queue, id, std::move(spec), std::move(occurrence), why,
                                                         boost::asio::use_future)
                             : pub.async_remove_schedule(queue, id, why, boost::asio::use_future);
        const auto ec = wait_confirm(confirmed, program, add ? "the upsert" : "the removal");
        if (!ec) return 1;
        if (*ec == tarry::publish_errc::unroutable && add) {
            std::fprintf(stderr, "%s: %s\n%s: (queue '%s' must exist: start its worker first, which declares it)\n",
                         program, why.message.c_str(), program, queue.c_str());
            return 1;
        }
        if (*ec) {
            std::fprintf(stderr, "%s: %s failed: %s\n", program, add ? "the upsert" : "the removal",
                         why.message.c_str());
            return 1;
        }
        if (add) std::printf("scheduled %s in %s: %s\n", id.c_str(), queue.c_str(), text.c_str());
        else std::printf("removed %s from %s\n", id.c_str(), queue.c_str());
        return 0;
    });
}

}  // namespace cli
