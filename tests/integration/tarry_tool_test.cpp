// The `tarry` tool as a child process: --help and --version, exit 2 with the
// usage on bad arguments, exit 1 when the broker cannot be reached, and
// `tarry publish` against the real broker: what it writes and prints, the id
// it makes up when none is given, exit 1 when no queue takes the job; and
// `tarry job cancel|reschedule`: the tombstone and the new copy they leave,
// what they print, their refusals.
#include "amqp_client.hpp"
#include "control_entries.hpp"
#include "process.hpp"
#include "tarry_tool.hpp"
#include "published_job.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "tarry/contract/schedule_headers.hpp"

#include <regex>
#include <set>

using namespace amqp_it;

namespace {


/// A loopback port nothing listens on: one just given up.
std::uint16_t closed_port() {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor a(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    return a.local_endpoint().port();
}


}  // namespace

TEST_CASE("tarry --help, tarry publish --help and tarry --version: on stdout, exit 0") {
    auto r = run_tarry({"--help"});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK_MESSAGE(r.out.rfind("usage: tarry COMMAND", 0) == 0, r.out);
    CHECK_MESSAGE(r.out.find("\n  publish ") != std::string::npos, r.out);
    CHECK(r.err.empty());

    r = run_tarry({"publish", "--help"});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK_MESSAGE(r.out.rfind("usage: tarry publish --url URL --queue Q", 0) == 0, r.out);
    CHECK_MESSAGE(r.out.find("random UUID") != std::string::npos, r.out);
    CHECK(r.err.empty());

    r = run_tarry({"--version"});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out == std::string("tarry ") + TARRY_PROJECT_VERSION + "\n");
    CHECK(r.err.empty());
}

TEST_CASE("tarry: bad arguments exit 2 with the reason and the usage on stderr, before connecting") {
    struct bad {
        std::vector<std::string> args;
        std::string says;   ///< in the reason
        std::string usage;  ///< the usage that follows it
    };
    // A run that got as far as connecting would exit 1: nothing listens there.
    const std::string url = "amqp://guest:guest@127.0.0.1:" + std::to_string(closed_port()) + "/%2F";
    const std::string top = "usage: tarry COMMAND";
    const std::string pub = "usage: tarry publish";
    const std::string job = "usage: tarry job cancel";
    const std::vector<bad> cases{
        {{}, "no command given", top},
        {{"frobnicate", "--url", url}, "unknown command 'frobnicate'", top},
        {{"--colour", "red"}, "unknown option '--colour'", top},
        {{"publish", "--url", url, "--queue", "q", "--colour", "red"}, "unknown option '--colour'", pub},
        {{"publish", "--url", url, "--queue", "q", "--delay-ms", "1", "--at", "1767225600"},
         "at most one of --delay-ms and --at", pub},
        {{"publish", "--url", url, "--queue", "q", "--delay-ms", "soon"}, "--delay-ms needs a non-negative integer",
         pub},
        {{"publish", "--url", url, "--queue", "q", "--delay-ms", "-5"}, "--delay-ms needs a non-negative integer",
         pub},
        {{"publish", "--url", url, "--queue", "q", "--at", "tomorrow"}, "--at needs a number", pub},
        {{"publish", "--url", url, "--queue", "q", "--delay-ms"}, "unexpected argument '--delay-ms'", pub},
        {{"publish", "--queue", "q"}, "--url is required", pub},
        {{"publish", "--url", url}, "--queue is required", pub},
        {{"publish", "--url", "http://x", "--queue", "q"}, "bad --url", pub},
        {{"job"}, "no job command given", job},
        {{"job", "delete", "--url", url}, "unknown job command 'delete'", job},
        {{"job", "cancel", "--url", url, "--queue", "q"}, "--id is required", job},
        {{"job", "cancel", "--url", url, "--id", "j"}, "--queue is required", job},
        {{"job", "cancel", "--url", url, "--queue", "q", "--id", ""}, "--id needs 1 to 255 bytes", job},
        {{"job", "cancel", "--url", url, "--queue", "q", "--id", std::string(256, 'x')}, "--id needs 1 to 255 bytes",
         job},
        {{"job", "cancel", "--url", url, "--queue", "q", "--id", "j", "--body", "b"}, "unknown option '--body'", job},
        {{"job", "reschedule", "--url", url, "--queue", "q", "--id", "j", "--body", "b"},
         "give one of --delay-ms and --at", job},
        {{"job", "reschedule", "--url", url, "--queue", "q", "--id", "j", "--delay-ms", "5", "--at", "1", "--body",
          "b"},
         "give one of --delay-ms and --at", job},
        {{"job", "reschedule", "--url", url, "--queue", "q", "--id", "j", "--delay-ms", "5"}, "--body is required",
         job},
        {{"job", "reschedule", "--url", url, "--queue", "q", "--id", "j", "--delay-ms", "5", "--body", "b",
          "--header", "novalue"},
         "--header needs K=V", job},
        {{"job", "reschedule", "--url", url, "--queue", "q", "--id", "j", "--delay-ms", "5", "--body", "b",
          "--header", "=v"},
         "--header needs K=V", job},
        {{"job", "cancel", "--url", "http://x", "--queue", "q", "--id", "j"}, "bad --url", job},
    };
    for (const auto& c : cases) {
        std::string line;
        for (const auto& a : c.args) line += " " + a;
        CAPTURE(line);
        const auto r = run_tarry(c.args);
        CHECK_MESSAGE(r.exit_code == 2, r.out << r.err);
        CHECK_MESSAGE(r.err.find(c.says) != std::string::npos, r.err);
        CHECK_MESSAGE(r.err.find(c.usage) != std::string::npos, r.err);
        CHECK(r.out.empty());
    }
}

TEST_CASE("tarry publish: a broker nobody answers for: exit 1, and it says so") {
    const std::string url = "amqp://guest:guest@127.0.0.1:" + std::to_string(closed_port()) + "/%2F";
    const auto r = run_tarry({"publish", "--url", url, "--queue", "q", "--id", "lost"});
    CHECK_FALSE(r.timed_out);
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.rfind("tarry publish: cannot connect to amqp://", 0) == 0, r.err);
    CHECK(r.out.empty());
}

TEST_CASE("tarry publish: a confirmed job carries its id and due time, prints them and exits 0") {
    TARRY_REQUIRE_BROKER(url);
    check_publishes_as_printed(url, "tool-publish", [](std::vector<std::string> args) {
        args.insert(args.begin(), "publish");
        return run_tarry(std::move(args));
    });
}

TEST_CASE("tarry publish: without --id a new UUID each time; without a schedule due now") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("tool-publish-id");
    value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));
    const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");

    std::set<std::string> ids;
    for (int i = 0; i < 3; ++i) {
        CAPTURE(i);
        const auto before = now_micros();
        const auto r = run_tarry({"publish", "--url", url, "--queue", q});
        const auto after = now_micros();
        REQUIRE_MESSAGE(r.exit_code == 0, r.out << r.err);
        std::smatch m;
        REQUIRE_MESSAGE(std::regex_match(r.out, m, printed), r.out);
        const std::string id = m[1];
        CHECK_MESSAGE(std::regex_match(id, uuid), id);
        ids.insert(id);
        const auto due = micros_of_text(m[2]);
        CHECK(due >= before);
        CHECK(due <= after);
        const auto got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
        REQUIRE(got);
        CHECK(got->item.msg.properties.message_id == std::optional<std::string>(id));
        CHECK(std::llabs(written_due(got->item.msg) - due) <= 1);
    }
    CHECK(ids.size() == 3);
}

TEST_CASE("tarry publish: a queue that does not exist: exit 1, and it says so") {
    TARRY_REQUIRE_BROKER(url);
    const auto q = unique_name("tool-publish-missing");
    const auto r = run_tarry({"publish", "--url", url, "--queue", q, "--delay-ms", "10"});
    CHECK_FALSE(r.timed_out);
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.find("tarry publish: queue '" + q + "' does not exist or is not bound") != std::string::npos,
                  r.err);
    CHECK(r.out.empty());
}

TEST_CASE("tarry job --help, tarry job cancel --help: the usage and what the commands do, exit 0") {
    for (const std::vector<std::string>& args : {std::vector<std::string>{"job", "--help"},
                                               std::vector<std::string>{"job", "cancel", "--help"}}) {
        const auto r = run_tarry(args);
        CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
        CHECK_MESSAGE(r.out.rfind("usage: tarry job cancel --url URL --queue Q --id ID", 0) == 0, r.out);
        CHECK_MESSAGE(r.out.find("tarry job reschedule") != std::string::npos, r.out);
        CHECK_MESSAGE(r.out.find("Q.tarry.control") != std::string::npos, r.out);
        CHECK(r.err.empty());
    }
    const auto r = run_tarry({"--help"});
    CHECK_MESSAGE(r.out.find("\n  job ") != std::string::npos, r.out);
}

TEST_CASE("tarry job cancel: a confirmed tombstone in the queue's control stream, printed, exit 0") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = unique_name("tool-cancel");
    control_stream_cleanup cleanup{c, q};
    const auto r = run_tarry({"job", "cancel", "--url", url, "--queue", q, "--id", "job-7"});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out == "cancelled job-7 in " + q + "\n");
    CHECK(r.err.empty());
    const auto entries = read_tombstones(c, q, 1);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].job_id == "job-7");
}

TEST_CASE("tarry job reschedule: the tombstone and the new copy, as printed, exit 0") {
    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    auto ch = c.open_channel();
    const auto q = unique_name("tool-reschedule");
    value_of(ch.async_declare_queue(queue_opts(q, false, true), use_future));
    control_stream_cleanup cleanup{c, q};
    const auto r = run_tarry({"job", "reschedule", "--url", url, "--queue", q, "--id", "job-8", "--at",
                              "1900000000.25", "--body", "again", "--header", "tenant=acme", "--header", "k=a=b"});
    CHECK_MESSAGE(r.exit_code == 0, r.out << r.err);
    CHECK(r.out == "rescheduled job-8 due 1900000000.250000 in " + q + "\n");
    const auto entries = read_tombstones(c, q, 1);
    REQUIRE(entries.size() == 1);
    CHECK(entries[0].job_id == "job-8");
    const auto got = value_of(ch.async_get(q, {.no_ack = true}, use_future));
    REQUIRE(got);
    const auto& m = got->item.msg;
    CHECK(m.body_view() == "again");
    CHECK(m.properties.message_id == std::optional<std::string>("job-8"));
    CHECK(written_due(m) == 1900000000250000);
    CHECK(tarry::contract::read_generation(m.properties) == entries[0].generation);
    CHECK(*m.properties.headers->find("tenant") == amqp::field_value("acme"));
    CHECK(*m.properties.headers->find("k") == amqp::field_value("a=b"));
}

TEST_CASE("tarry job: a broker nobody answers for, or a queue that does not exist: exit 1, said so") {
    const std::string closed = "amqp://guest:guest@127.0.0.1:" + std::to_string(closed_port()) + "/%2F";
    auto r = run_tarry({"job", "cancel", "--url", closed, "--queue", "q", "--id", "j"});
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.rfind("tarry job: cannot connect to amqp://", 0) == 0, r.err);

    TARRY_REQUIRE_BROKER(url);
    connected_client c(url);
    const auto q = unique_name("tool-reschedule-missing");
    control_stream_cleanup cleanup{c, q};
    r = run_tarry({"job", "reschedule", "--url", url, "--queue", q, "--id", "j", "--delay-ms", "10", "--body", "b"});
    CHECK_MESSAGE(r.exit_code == 1, r.out << r.err);
    CHECK_MESSAGE(r.err.find("queue '" + q + "' must exist") != std::string::npos, r.err);
    CHECK(r.out.empty());
}
