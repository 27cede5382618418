// A connection on an I/O thread of its own for one command (see
// broker_session.hpp).
#include "broker_session.hpp"

#include "tarry/amqp/url.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>

#include <cstdio>
#include <thread>

namespace cli {

int with_broker(const tarry::amqp::connection_config& broker, const char* program,
                const std::function<int(tarry::amqp::connection&)>& work) {
    // Written on the I/O thread when the connect completes, so it outlives it.
    tarry::amqp::diagnostics connect_why;
    boost::asio::io_context io;
    auto guard = boost::asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    int status = 1;
    {
        tarry::amqp::connection conn(io.get_executor(), broker);
        if (conn.async_connect(connect_why, boost::asio::use_future).get()) {
            std::fprintf(stderr, "%s: cannot connect to %s: %s\n", program,
                         tarry::amqp::to_redacted_url(broker).c_str(), connect_why.message.c_str());
        } else {
            status = work(conn);
        }
        conn.async_close(boost::asio::use_future).wait_for(std::chrono::seconds(5));
    }
    guard.reset();
    io_thread.join();
    return status;
}

std::optional<std::error_code> wait_confirm(std::future<std::error_code>& confirmed, const char* program,
                                            const char* what) {
    if (confirmed.wait_for(confirm_wait) == std::future_status::ready) return confirmed.get();
    std::fprintf(stderr, "%s: the broker did not confirm %s within %lld s; it may or may not have been done\n",
                 program, what, static_cast<long long>(confirm_wait.count()));
    return std::nullopt;
}

}  // namespace cli
