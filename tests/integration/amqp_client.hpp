// Integration-test helpers for the AMQP client: a connection on its own
// I/O thread, bounded waits on futures, unique names, and a consumer that
// collects deliveries for the test thread.
#pragma once

#include "env.hpp"
#include "io_thread.hpp"

#include "tarry/amqp/channel.hpp"
#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/url.hpp"

#include <boost/asio/use_future.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <ostream>
#include <random>
#include <string>

namespace amqp_it {

namespace amqp = tarry::amqp;
using boost::asio::use_future;
using namespace std::chrono_literals;

/// A name no other test (or earlier run) uses.
inline std::string unique_name(const std::string& what) {
    static std::atomic<int> n{0};
    static const auto salt = std::random_device{}();
    return "tarry-it-" + what + "-" + std::to_string(::getpid()) + "-" + std::to_string(salt % 100000) +
           "-" + std::to_string(++n);
}

inline amqp::connection_config config_of(const std::string& url) {
    auto r = amqp::parse_url(url);
    REQUIRE_MESSAGE(!r.error, r.detail);
    return r.config;
}

/// Waits on a future for at most `t`; a timeout fails the test (never hangs).
template <class T>
T wait(std::future<T> f, std::chrono::milliseconds t = 30s) {
    REQUIRE_MESSAGE(f.wait_for(t) == std::future_status::ready, "operation timed out");
    return f.get();
}

/// Collects deliveries from the I/O thread for the test thread.
class inbox {
public:
    amqp::consumer_handlers handlers() {
        return {[this](amqp::delivery d) {
                    std::lock_guard lock(m_);
                    items_.push_back(std::move(d));
                    cv_.notify_all();
                },
                [this](std::error_code ec) {
                    std::lock_guard lock(m_);
                    cancelled_ = ec;
                    cv_.notify_all();
                }};
    }
    /// The next delivery, waiting at most `t`.
    std::optional<amqp::delivery> next(std::chrono::milliseconds t = 30s) {
        std::unique_lock lock(m_);
        if (!cv_.wait_for(lock, t, [&] { return !items_.empty(); })) return std::nullopt;
        auto d = std::move(items_.front());
        items_.pop_front();
        return d;
    }
    /// Waits until the consumer was cancelled (or `t` passed).
    std::error_code wait_cancelled(std::chrono::milliseconds t = 30s) {
        std::unique_lock lock(m_);
        cv_.wait_for(lock, t, [&] { return static_cast<bool>(cancelled_); });
        return cancelled_;
    }
    std::size_t size() {
        std::lock_guard lock(m_);
        return items_.size();
    }

private:
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<amqp::delivery> items_;
    std::error_code cancelled_;
};

/// An open connection on its own I/O thread.
struct client {
    explicit client(const std::string& url, amqp::connection_hooks hooks = {})
        : client(config_of(url), std::move(hooks)) {}
    explicit client(amqp::connection_config cfg, amqp::connection_hooks hooks = {})
        : conn(io.executor(), std::move(cfg), std::move(hooks)) {}

    void connect() {
        auto f = conn.async_connect(use_future);
        REQUIRE(f.wait_for(30s) == std::future_status::ready);
        try {
            f.get();
        } catch (const std::system_error& e) {
            FAIL("connect failed: " << e.what() << " / " << conn.last_error().message);
        }
    }
    amqp::channel open_channel() { return wait(conn.async_open_channel(use_future)); }
    ~client() {
        auto f = conn.async_close(use_future);
        f.wait_for(10s);
    }

    tarry_test::io_thread io;
    amqp::connection conn;
};

/// The error code an operation's future failed with (none on success).
template <class T>
std::error_code error_of(std::future<T> f, std::chrono::milliseconds t = 30s) {
    REQUIRE_MESSAGE(f.wait_for(t) == std::future_status::ready, "operation timed out");
    try {
        f.get();
        return {};
    } catch (const std::system_error& e) {
        return e.code();
    }
}

}  // namespace amqp_it
