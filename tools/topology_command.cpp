// tarry topology: the broker-side delay cascade (docs/cascades.md), or a
// worker's whole topology (--worker Q: what a consumer declares, README "A
// worker's topology as code").
//
//   tarry topology declare --url URL TOPOLOGY [--vhost V] [--format amqp]
//   tarry topology export TOPOLOGY [--vhost V] --format definitions|terraform
//   tarry topology verify --url URL TOPOLOGY [--vhost V]
//   TOPOLOGY: --strategy binary|powers [--base N] --levels N --unit-ms N
//                                      [--queue-type classic|quorum] [--prefix P]
//           | --worker Q [--queue-type classic|quorum] [--hold-horizon-ms N] [--events]
//                        [--parking ladder | --parking cascade --strategy ... (as above)]
//
// declare declares it over AMQP (in --vhost, else the URL's), a cascade with
// its descriptor, and prints what it declared; export writes it to stdout as
// RabbitMQ definitions JSON or Terraform JSON; verify checks the broker
// against it and changes nothing (topology_verify.hpp). Exit 0 done (verify:
// all match), 1 not done (verify: what differs, listed), 2 bad arguments.
#include "broker_session.hpp"
#include "command_args.hpp"
#include "commands.hpp"
#include "publish_job.hpp"
#include "topology_export.hpp"
#include "topology_verify.hpp"

#include "tarry/consumer/worker_topology.hpp"

#include "tarry/parking/cascade_declaration.hpp"

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <cstdio>
#include <optional>

namespace cli {

namespace {

namespace parking = tarry::parking;

const char* const usage =
    "usage: tarry topology declare --url URL TOPOLOGY [--vhost V] [--format amqp]\n"
    "       tarry topology export TOPOLOGY [--vhost V] --format definitions|terraform\n"
    "       tarry topology verify --url URL TOPOLOGY [--vhost V]\n"
    "TOPOLOGY: --strategy binary|powers [--base N] --levels N --unit-ms N\n"
    "                                   [--queue-type classic|quorum] [--prefix P]\n"
    "        | --worker Q [--queue-type classic|quorum] [--hold-horizon-ms N] [--events]\n"
    "                     [--parking ladder | --parking cascade --strategy ... (as above)]\n";

const char* const help =
    "The delay cascade: TTL queues that dead-letter into each other, so that a message\n"
    "reaches any exchange after a delay with no plugin and no consumer of ours\n"
    "(docs/cascades.md; publish through it with `tarry delay`). Or, with --worker, all\n"
    "that a worker consuming queue Q declares: the work queue, its dead-letter queue,\n"
    "the wait queues (or, with --parking cascade, the cascade and the queue's delivery\n"
    "queue) and, with --events, the events exchange; what a worker started with\n"
    "--no-declare needs.\n"
    "  declare     declares it over AMQP, a cascade with the descriptor `tarry delay`\n"
    "              reads; idempotent\n"
    "  export      writes it to stdout: RabbitMQ definitions JSON (rabbitmqctl\n"
    "              import_definitions) or Terraform JSON (.tf.json, cyrilgdn/rabbitmq);\n"
    "              definitions carry no messages: declare a cascade once after importing\n"
    "  verify      checks the broker against it and changes nothing: each exchange and\n"
    "              queue must exist (a passive declare) with the same arguments (declared\n"
    "              again: the broker names what differs); bindings are listed, not\n"
    "              checked (AMQP cannot read them); one line per part\n"
    "  --url URL              the broker: amqp://USER:PASS@HOST:PORT/VHOST, or amqps://\n"
    "  --strategy S           binary (one queue per level) or powers (base N: N - 1\n"
    "                         queues per level)\n"
    "  --base N               the powers strategy's base, 2 to 36\n"
    "  --levels N             levels, 1 to 64: the longest delay is base^levels - 1 units\n"
    "  --unit-ms N            the unit, in ms: delays round up to whole units\n"
    "  --queue-type T         classic (default) or quorum (at-least-once dead-lettering)\n"
    "  --prefix P             of every name of the cascade (default tarry.delay)\n"
    "  --worker Q             a worker's topology, for work queue Q (as echo_worker --queue)\n"
    "  --hold-horizon-ms N    the worker's hold horizon: its wait ladder (default 900000)\n"
    "  --parking P            ladder (the default: wait queues of the work queue's own) or\n"
    "                         cascade (through the cascade --strategy ... describes)\n"
    "  --events               the worker publishes its job events (the tarry.events exchange)\n"
    "  --vhost V              the virtual host: declare's and verify's (default: the URL's),\n"
    "                         or the one export names in its output (default /)\n"
    "  --format F             declare: amqp (the default); export: definitions or terraform\n"
    "exit status: 0 done (verify: everything matches); 1 not done, the reason on stderr\n"
    "(verify: something missing or different, listed); 2 bad arguments\n";

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

// What --worker and its options describe: a consumer's options as
// echo_worker would set them.
tarry::subscription_options worker_options_of(args& a) {
    tarry::subscription_options o;
    o.queue = a.required("--worker");
    o.queue_type = queue_type_option(a);
    o.hold_horizon = a.millis("--hold-horizon-ms", o.hold_horizon);
    o.publish_events = a.flag("--events");
    const std::string parking = a.text("--parking", "ladder");
    if (parking == "cascade") {
        o.parking_strategy = spec_of(a);
        o.parking_strategy->queue_type = o.queue_type;
    } else if (parking != "ladder") {
        a.fail("--parking is ladder or cascade, not '" + parking + "'");
    } else {
        for (const char* cascade_option : {"--strategy", "--base", "--levels", "--unit-ms", "--prefix"})
            if (a.has(cascade_option))
                a.fail(std::string(cascade_option) + " describes a cascade: with --worker, it needs --parking cascade");
    }
    if (const auto problem = tarry::validate(o)) a.fail("--worker: " + problem->message);
    return o;
}

// The topology the arguments describe: a cascade (--strategy ...) or a
// worker's (--worker ...).
struct described {
    tarry::amqp::topology parts;
    std::optional<parking::delay_cascade> cascade;  // a cascade alone: declare writes its descriptor
};

described topology_of(args& a) {
    if (a.has("--worker")) return {tarry::worker_topology(worker_options_of(a)), std::nullopt};
    for (const char* worker_option : {"--hold-horizon-ms", "--events", "--parking"})
        if (a.has(worker_option)) a.fail(std::string(worker_option) + " describes a worker: it needs --worker");
    parking::delay_cascade cascade(spec_of(a));
    auto parts = cascade.topology();
    return {std::move(parts), std::move(cascade)};
}

// Opens a channel on `conn` for `program`, saying why not on stderr.
std::optional<tarry::amqp::channel> channel_for(tarry::amqp::connection& conn, const char* program) {
    tarry::amqp::diagnostics why;
    auto opened = conn.async_open_channel(why, boost::asio::use_future);
    if (opened.wait_for(confirm_wait) != std::future_status::ready) {
        std::fprintf(stderr, "%s: no channel opened in time\n", program);
        return std::nullopt;
    }
    auto [ec, ch] = opened.get();
    if (ec) {
        std::fprintf(stderr, "%s: cannot open a channel: %s\n", program, why.message.c_str());
        return std::nullopt;
    }
    return ch;
}

int declare(const tarry::amqp::connection_config& broker, const described& d) {
    const char* const program = "tarry topology declare";
    tarry::amqp::diagnostics why;
    return with_broker(broker, program, [&](tarry::amqp::connection& conn) {
        const auto ch = channel_for(conn, program);
        if (!ch) return 1;
        auto declared = d.cascade ? parking::async_declare_cascade(conn.get_executor(), *ch, *d.cascade, why,
                                                                   boost::asio::use_future)
                                  : parking::async_declare(conn.get_executor(), *ch, d.parts, why,
                                                           boost::asio::use_future);
        const auto done = wait_confirm(declared, program, "the declaration");
        if (!done) return 1;
        if (*done) {
            std::fprintf(stderr, "%s: %s\n", program, why.message.c_str());
            return 1;
        }
        if (!d.cascade) {
            std::printf("declared %zu exchanges, %zu queues and %zu bindings, the work queue %s first\n",
                        d.parts.exchanges.size(), d.parts.queues.size(), d.parts.bindings.size(),
                        d.parts.queues.front().name.c_str());
            return 0;
        }
        const auto& cascade = *d.cascade;
        const auto& s = cascade.spec();
        std::printf("declared %s: %s, base %u, %u levels of %lld ms (longest delay %lld ms), enter at %s\n",
                    s.prefix.c_str(), std::string(parking::to_string(s.strategy)).c_str(), s.base, s.levels,
                    static_cast<long long>(s.unit.count()), static_cast<long long>(cascade.max_delay().count()),
                    cascade.entry_exchange().c_str());
        return 0;
    });
}

int verify(const tarry::amqp::connection_config& broker, const described& d) {
    return with_broker(broker, "tarry topology verify", [&](tarry::amqp::connection& conn) {
        const auto parts = verify_topology(conn, d.parts);
        std::fputs(verification_report(parts).c_str(), stdout);
        return all_ok(parts) ? 0 : 1;
    });
}

// --vhost for declare and verify: the URL's unless given.
tarry::amqp::connection_config broker_in_vhost(args& a, const std::string& url) {
    const bool vhost_given = a.has("--vhost");
    const std::string vhost = a.text("--vhost", "");
    if (vhost_given && (vhost.empty() || vhost.size() > 255)) a.fail("--vhost needs 1 to 255 bytes");
    auto broker = broker_of(a, url);
    if (!vhost.empty()) broker.vhost = vhost;
    return broker;
}

}  // namespace

int topology_command(int argc, char** argv) {
    const std::string verb = argc >= 2 ? argv[1] : "";
    if (verb != "declare" && verb != "export" && verb != "verify") {
        if (verb == "--help" || verb == "-h") {
            std::fputs(usage, stdout);
            std::fputs(help, stdout);
            return 0;
        }
        const std::string why = verb.empty() ? "no topology command given (declare, export or verify)"
                                             : "unknown topology command '" + verb + "'";
        std::fprintf(stderr, "%s\n%s", why.c_str(), usage);
        return 2;
    }
    args a(argc - 1, argv + 1, usage, help, {"--events"});
    if (verb == "declare" || verb == "verify") {
        const std::string url = a.required("--url");
        if (verb == "declare") {
            if (const auto format = a.text("--format", "amqp"); format != "amqp")
                a.fail("declare declares over AMQP (--format amqp); definitions and terraform are export's formats");
        } else if (a.has("--format")) {
            a.fail("verify prints one line per part; --format is declare's and export's");
        }
        const auto d = topology_of(a);
        const auto broker = broker_in_vhost(a, url);
        a.finish();
        return verb == "declare" ? declare(broker, d) : verify(broker, d);
    }
    if (a.has("--url")) a.fail("export writes to stdout and needs no --url");
    const std::string format = a.required("--format");
    if (format == "amqp") a.fail("--format amqp is what `tarry topology declare` does");
    if (format != "definitions" && format != "terraform")
        a.fail("--format is definitions or terraform, not '" + format + "'");
    const std::string vhost = a.text("--vhost", "/");
    if (vhost.empty() || vhost.size() > 255) a.fail("--vhost needs 1 to 255 bytes");
    const auto d = topology_of(a);
    a.finish();
    const std::string out = format == "definitions" ? definitions_json(d.parts, vhost) : terraform_json(d.parts, vhost);
    std::fputs(out.c_str(), stdout);
    return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace cli
