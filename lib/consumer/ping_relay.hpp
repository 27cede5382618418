// consumer::async_ping: a ping runs on the consumer's I/O executor, then
// completes on its handler's associated executor. When that executor does
// not run (the consumer's own I/O thread before start() or after stop()),
// a ping completes at once instead, and pings still queued when it stops
// complete then: none waits forever. Thread-safe.
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace tarry::detail {

class ping_relay : public std::enable_shared_from_this<ping_relay> {
public:
    using handler = boost::asio::any_completion_handler<void()>;

    /// `running`: whether `io` runs from now on (an executor of the caller's).
    ping_relay(boost::asio::any_io_executor io, bool running);

    void ping(handler h);
    /// The I/O executor runs from now on.
    void open();
    /// It no longer runs: pending pings complete now, later ones at once.
    void close();

private:
    void answered(std::uint64_t id);

    const boost::asio::any_io_executor io_;
    std::mutex mutex_;
    bool running_;
    std::uint64_t last_id_ = 0;
    std::unordered_map<std::uint64_t, handler> pending_;
};

}  // namespace tarry::detail
