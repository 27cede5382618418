// tarry topology: the broker-side delay cascade (docs/cascades.md).
//
//   tarry topology declare --url URL --strategy binary|powers [--base N] --levels N --unit-ms N
//                          [--queue-type classic|quorum] [--prefix P] [--vhost V] [--format amqp]
//   tarry topology export --strategy binary|powers [--base N] --levels N --unit-ms N
//                         [--queue-type classic|quorum] [--prefix P] [--vhost V]
//                         --format definitions|terraform
//
// declare declares it over AMQP (in --vhost, else the URL's) with its
// descriptor, and prints what it declared; export writes it to stdout as
// RabbitMQ definitions JSON or Terraform JSON. Exit 0 done, 1 not done, 2
// bad arguments.
#include "broker_session.hpp"
#include "command_args.hpp"
#include "commands.hpp"
#include "publish_job.hpp"
#include "topology_export.hpp"

#include "tarry/parking/cascade_declaration.hpp"

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cstdio>

namespace cli {

namespace {

namespace parking = tarry::parking;

const char* const usage =
    "usage: tarry topology declare --url URL --strategy binary|powers [--base N] --levels N --unit-ms N\n"
    "                              [--queue-type classic|quorum] [--prefix P] [--vhost V] [--format amqp]\n"
    "       tarry topology export --strategy binary|powers [--base N] --levels N --unit-ms N\n"
    "                             [--queue-type classic|quorum] [--prefix P] [--vhost V]\n"
    "                             --format definitions|terraform\n";

const char* const help =
    "The delay cascade: TTL queues that dead-letter into each other, so that a message\n"
    "reaches any exchange after a delay with no plugin and no consumer of ours\n"
    "(docs/cascades.md; publish through it with `tarry delay`).\n"
    "  declare     declares it over AMQP, with the descriptor `tarry delay` reads;\n"
    "              idempotent\n"
    "  export      writes it to stdout: RabbitMQ definitions JSON (rabbitmqctl\n"
    "              import_definitions) or Terraform JSON (.tf.json, cyrilgdn/rabbitmq);\n"
    "              definitions carry no messages: declare once after importing\n"
    "  --url URL              the broker: amqp://USER:PASS@HOST:PORT/VHOST, or amqps://\n"
    "  --strategy S           binary (one queue per level) or powers (base N: N - 1\n"
    "                         queues per level)\n"
    "  --base N               the powers strategy's base, 2 to 36\n"
    "  --levels N             levels, 1 to 64: the longest delay is base^levels - 1 units\n"
    "  --unit-ms N            the unit, in ms: delays round up to whole units\n"
    "  --queue-type T         classic (default) or quorum (at-least-once dead-lettering)\n"
    "  --prefix P             of every name (default tarry.delay)\n"
    "  --vhost V              the virtual host: declare's (default: the URL's), or the one\n"
    "                         export names in its output (default /)\n"
    "  --format F             declare: amqp (the default); export: definitions or terraform\n"
    "exit status: 0 done; 1 not done (the reason on stderr); 2 bad arguments\n";

parking::cascade_spec spec_of(args& a) {
    parking::cascade_spec spec;
    const std::string strategy = a.required("--strategy");
    const auto s = parking::strategy_from_string(strategy);
    if (!s) a.fail("--strategy is binary or powers, not '" + strategy + "'");
    spec.strategy = *s;
    if (spec.strategy == parking::cascade_strategy::binary && a.has("--base"))
        a.fail("--base applies to --strategy powers only (binary is base 2)");
    if (spec.strategy == parking::cascade_strategy::powers && !a.has("--base"))
        a.fail("--base is required with --strategy powers");
    spec.base = static_cast<unsigned>(std::min<std::size_t>(a.number("--base", 2), 1000));
    if (!a.has("--levels")) a.fail("--levels is required");
    if (!a.has("--unit-ms")) a.fail("--unit-ms is required");
    spec.levels = static_cast<unsigned>(std::min<std::size_t>(a.number("--levels", 0), 1000));
    spec.unit = a.millis("--unit-ms", {});
    spec.queue_type = queue_type_option(a);
    spec.prefix = a.text("--prefix", spec.prefix);
    if (auto why = parking::check(spec); why.code) a.fail(why.message);
    return spec;
}

int declare(const tarry::amqp::connection_config& broker, const parking::delay_cascade& cascade) {
    const char* const program = "tarry topology declare";
    tarry::amqp::diagnostics why;
    return with_broker(broker, program, [&](tarry::amqp::connection& conn) {
        auto opened = conn.async_open_channel(why, boost::asio::use_future);
        if (opened.wait_for(confirm_wait) != std::future_status::ready) {
            std::fprintf(stderr, "%s: no channel opened in time\n", program);
            return 1;
        }
        auto [ec, ch] = opened.get();
        if (ec) {
            std::fprintf(stderr, "%s: cannot open a channel: %s\n", program, why.message.c_str());
            return 1;
        }
        auto declared = parking::async_declare_cascade(conn.get_executor(), ch, cascade, why, boost::asio::use_future);
        const auto done = wait_confirm(declared, program, "the declaration");
        if (!done) return 1;
        if (*done) {
            std::fprintf(stderr, "%s: %s\n", program, why.message.c_str());
            return 1;
        }
        const auto& s = cascade.spec();
        std::printf("declared %s: %s, base %u, %u levels of %lld ms (longest delay %lld ms), enter at %s\n",
                    s.prefix.c_str(), std::string(parking::to_string(s.strategy)).c_str(), s.base, s.levels,
                    static_cast<long long>(s.unit.count()), static_cast<long long>(cascade.max_delay().count()),
                    cascade.entry_exchange().c_str());
        return 0;
    });
}

}  // namespace

int topology_command(int argc, char** argv) {
    const std::string verb = argc >= 2 ? argv[1] : "";
    if (verb != "declare" && verb != "export") {
        if (verb == "--help" || verb == "-h") {
            std::fputs(usage, stdout);
            std::fputs(help, stdout);
            return 0;
        }
        const std::string why = verb.empty() ? "no topology command given (declare or export)"
                                             : "unknown topology command '" + verb + "'";
        std::fprintf(stderr, "%s\n%s", why.c_str(), usage);
        return 2;
    }
    args a(argc - 1, argv + 1, usage, help);
    if (verb == "declare") {
        const std::string url = a.required("--url");
        if (const auto format = a.text("--format", "amqp"); format != "amqp")
            a.fail("declare declares over AMQP (--format amqp); definitions and terraform are export's formats");
        const bool vhost_given = a.has("--vhost");
        const std::string vhost = a.text("--vhost", "");
        if (vhost_given && (vhost.empty() || vhost.size() > 255)) a.fail("--vhost needs 1 to 255 bytes");
        const auto spec = spec_of(a);
        a.finish();
        auto broker = broker_of(a, url);
        if (!vhost.empty()) broker.vhost = vhost;
        return declare(broker, parking::delay_cascade(spec));
    }
    if (a.has("--url")) a.fail("export writes to stdout and needs no --url");
    const std::string format = a.required("--format");
    if (format == "amqp") a.fail("--format amqp is what `tarry topology declare` does");
    if (format != "definitions" && format != "terraform")
        a.fail("--format is definitions or terraform, not '" + format + "'");
    const std::string vhost = a.text("--vhost", "/");
    if (vhost.empty() || vhost.size() > 255) a.fail("--vhost needs 1 to 255 bytes");
    const auto spec = spec_of(a);
    a.finish();
    const auto topology = parking::delay_cascade(spec).topology();
    const std::string out = format == "definitions" ? definitions_json(topology, vhost) : terraform_json(topology, vhost);
    std::fputs(out.c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace cli
