// tarry delay: delivers one message to any exchange after a delay, through
// the delay cascade declared on the broker (docs/cascades.md).
//
//   tarry delay --url URL --exchange EX --routing-key RK --delay-ms N [--id ID] [--body TEXT]
//               [--header K=V]... [--prefix P]
//
// Reads the cascade's descriptor (`tarry topology declare` wrote it),
// declares the destination's delivery queue if need be, publishes into
// the cascade and exits 0 once the broker confirmed it; 1 when not; 2 on
// bad arguments.
#include "broker_session.hpp"
#include "command_args.hpp"
#include "commands.hpp"
#include "publish_job.hpp"

#include "tarry/publisher/publisher.hpp"

#include <boost/asio/use_future.hpp>

#include <cstdio>

namespace cli {

namespace {

const char* const usage =
    "usage: tarry delay --url URL --exchange EX --routing-key RK --delay-ms N [--id ID] [--body TEXT]\n"
    "                   [--header K=V]... [--prefix P]\n";

const char* const help =
    "Delivers one message to exchange EX with routing key RK after N ms, through the\n"
    "delay cascade declared on the broker (tarry topology declare): any consumer of\n"
    "the queue it reaches gets it then. The delay rounds up to the cascade's unit.\n"
    "  --url URL          the broker: amqp://USER:PASS@HOST:PORT/VHOST, or amqps://\n"
    "  --exchange EX      the destination exchange (\"\" for the default exchange)\n"
    "  --routing-key RK   the destination routing key (the queue, for \"\")\n"
    "  --delay-ms N       the delay; 0 publishes straight to the destination\n"
    "  --id ID            the message_id (default none)\n"
    "  --body TEXT        the body (default empty)\n"
    "  --header K=V       a header (a string); may be repeated\n"
    "  --prefix P         the cascade's prefix (default tarry.delay)\n"
    "exit status: 0 confirmed into the cascade; 1 not (the reason on stderr); 2 bad\n"
    "arguments\n";

}  // namespace

int delay_command(int argc, char** argv) {
    const char* const program = "tarry delay";
    args a(argc, argv, usage, help);
    const std::string url = a.required("--url");
    if (!a.has("--exchange")) a.fail("--exchange is required (\"\" for the default exchange)");
    const std::string exchange = a.text("--exchange", "");
    const std::string routing_key = a.required("--routing-key");
    if (!a.has("--delay-ms")) a.fail("--delay-ms is required");
    const auto delay = a.millis("--delay-ms", {});
    tarry::amqp::message msg(a.text("--body", ""));
    if (a.has("--id")) {
        msg.properties.message_id = a.required("--id");
        if (msg.properties.message_id->empty() || msg.properties.message_id->size() > 255)
            a.fail("--id needs 1 to 255 bytes");
    }
    if (auto headers = header_options(a); !headers.empty()) msg.properties.headers = std::move(headers);
    tarry::publisher_options options;
    options.delay_cascade_prefix = a.text("--prefix", options.delay_cascade_prefix);
    a.finish();

    tarry::amqp::diagnostics why;
    return with_broker(broker_of(a, url), program, [&](tarry::amqp::connection& conn) {
        tarry::publisher pub(conn, options);
        auto confirmed = pub.async_publish_delayed(exchange, routing_key, std::move(msg), delay, why,
                                                   boost::asio::use_future);
        const auto ec = wait_confirm(confirmed, program, "the delayed message");
        if (!ec) return 1;
        if (*ec) {
            std::fprintf(stderr, "%s: %s\n", program, why.message.c_str());
            return 1;
        }
        std::printf("delayed %lld ms to exchange '%s' with routing key '%s'\n", static_cast<long long>(delay.count()),
                    exchange.c_str(), routing_key.c_str());
        return 0;
    });
}

}  // namespace cli
