// replay_dead_letters: moves dead letters back to their queue to run again
// from attempt 1. Its command line is a public interface:
//
//   replay_dead_letters --url URL --queue Q [--reason PREFIX] [--limit N]
//
// Reads Q.dead once; each dead letter whose x-tarry-reason starts with
// PREFIX (default: all) goes back to Q, confirmed before it is removed.
// Prints `moved N, left M in Q.dead`; exit 0, 1 on error, 2 on bad arguments.
#include "command_args.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/consumer/replay.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <thread>

int main(int argc, char** argv) {
    cli::args args(argc, argv,
                       "usage: replay_dead_letters --url URL --queue Q [--reason PREFIX] [--limit N]\n");
    const std::string url = args.required("--url");
    tarry::replay_options o;
    o.queue = args.required("--queue");
    o.reason_prefix = args.text("--reason", "");
    o.limit = args.number("--limit", o.limit);
    args.finish();
    const auto parsed = tarry::amqp::parse_url(url);
    if (parsed.error) {
        std::fprintf(stderr, "replay_dead_letters: bad --url: %s\n", parsed.detail.c_str());
        return 2;
    }
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    int status = 0;
    {
        tarry::amqp::connection conn(io.get_executor(), parsed.config);
        if (conn.async_connect(boost::asio::use_future).get()) {
            std::fprintf(stderr, "replay_dead_letters: cannot connect: %s\n", conn.last_error().message.c_str());
            status = 1;
        } else {
            try {
                const auto r = tarry::replay_dead_letters(conn, o);
                std::printf("moved %zu, left %zu in %s.dead\n", r.moved, r.skipped, o.queue.c_str());
            } catch (const std::exception& e) {
                std::fprintf(stderr, "replay_dead_letters: %s\n", e.what());
                status = 1;
            }
        }
        conn.async_close(boost::asio::use_future).wait_for(std::chrono::seconds(5));
    }
    guard.reset();
    io_thread.join();
    return status;
}
