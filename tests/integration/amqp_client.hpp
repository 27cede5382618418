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

#include <algorithm>
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

/// Option structs built without partial aggregate initialization.
/// A queue that is not exclusive is durable: RabbitMQ 4.x denies transient
/// non-exclusive queues (deprecated feature transient_nonexcl_queues, denied
/// on the 4.0 nodes of the tests, by default from 4.3).
inline amqp::queue_options queue_opts(std::string name, bool exclusive = false,
                                      bool auto_delete = false, amqp::field_table args = {}) {
    amqp::queue_options o;
    o.name = std::move(name);
    o.durable = !exclusive;
    o.exclusive = exclusive;
    o.auto_delete = auto_delete;
    o.arguments = std::move(args);
    return o;
}
inline amqp::queue_options passive_queue(std::string name) {
    amqp::queue_options o;
    o.name = std::move(name);
    o.passive = true;
    return o;
}
inline amqp::exchange_options exchange_opts(std::string name, std::string type,
                                            amqp::field_table args = {}) {
    amqp::exchange_options o;
    o.name = std::move(name);
    o.type = std::move(type);
    o.auto_delete = true;
    o.arguments = std::move(args);
    return o;
}
inline amqp::consume_options consume_opts(std::string queue) {
    amqp::consume_options o;
    o.queue = std::move(queue);
    return o;
}
inline amqp::qos_options prefetch(std::uint16_t n) {
    amqp::qos_options o;
    o.prefetch_count = n;
    return o;
}

/// All 14 properties set, and headers of every field type.
inline amqp::basic_properties all_properties() {
    amqp::basic_properties p;
    p.content_type = "application/json";
    p.content_encoding = "identity";
    p.headers = amqp::field_table{
        {"bool", true},
        {"int8", std::int8_t{-8}},
        {"uint8", std::uint8_t{200}},
        {"int16", std::int16_t{-1600}},
        {"uint16", std::uint16_t{60000}},
        {"int32", std::int32_t{-320000}},
        {"uint32", std::uint32_t{4000000000u}},
        {"int64", std::int64_t{-6400000000000}},
        {"float", 1.5f},
        {"double", 2.25},
        {"decimal", amqp::decimal_value{2, 12345}},
        {"string", std::string("text \xc3\xa9")},
        {"timestamp", amqp::timestamp_value{1700000000}},
        {"array", amqp::field_array{std::int32_t{1}, std::string("two"), true}},
        {"table", amqp::field_table{{"inner", std::int64_t{7}}}},
        {"bytes", amqp::byte_array{{0, 1, 2, 0xff}}},
        {"void", amqp::void_value{}},
    };
    p.delivery_mode = 2;
    p.priority = 5;
    p.correlation_id = "corr-1";
    p.reply_to = "reply.queue";
    p.expiration = "600000";
    p.message_id = "msg-1";
    p.timestamp = 1700000001;
    p.type = "job";
    p.user_id = "guest";
    p.app_id = "tarry-tests";
    p.cluster_id = "cluster-a";
    return p;
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
    /// Consumes `queue` on `ch` into this inbox, requiring success; the
    /// consumer tag.
    std::string subscribe(const amqp::channel& ch, const std::string& queue);
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
        const std::error_code ec = wait(conn.async_connect(use_future));
        REQUIRE_MESSAGE(!ec, "connect failed: " << ec.message() << " / " << conn.last_error().message);
    }
    amqp::channel open_channel() {
        auto [ec, ch] = wait(conn.async_open_channel(use_future));
        REQUIRE_MESSAGE(!ec, "open channel failed: " << ec.message());
        return ch;
    }
    ~client() {
        auto f = conn.async_close(use_future);
        f.wait_for(10s);
    }

    tarry_test::io_thread io;
    amqp::connection conn;
};

/// A client connected in its constructor (a failed connect fails the test).
struct connected_client : client {
    explicit connected_client(const std::string& url) : client(url) { connect(); }
};

/// The major version of the broker `c` is connected to, from the `version`
/// its connection.start carries ("3.10.8" -> 3, "4.0.5" -> 4).
inline int broker_major(const client& c) {
    const auto info = c.conn.info();
    REQUIRE_MESSAGE(info, "not connected");
    const auto* v = info->server_properties.find("version");
    const auto* s = v ? std::get_if<std::string>(&v->value) : nullptr;
    REQUIRE_MESSAGE(s, "connection.start carries no version");
    return std::stoi(*s);
}

/// `sent` as the broker delivers it. RabbitMQ 4 hands a message's header
/// table back sorted by name (bytewise; tables nested in it keep their
/// order), RabbitMQ 3.10 in the publisher's order; both keep every name and
/// value (checked on 4.0.5 and 3.10.8).
inline amqp::basic_properties as_delivered(amqp::basic_properties sent, int broker_major) {
    if (broker_major >= 4 && sent.headers) {
        auto& entries = sent.headers->entries();
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.name < b.name; });
    }
    return sent;
}

/// The value of a `void(error_code, T)` operation's future, requiring success.
template <class T>
T value_of(std::future<std::tuple<std::error_code, T>> f, std::chrono::milliseconds t = 30s) {
    auto [ec, v] = wait(std::move(f), t);
    REQUIRE_MESSAGE(!ec, "operation failed: " << ec.message());
    return std::move(v);
}

/// Requires a `void(error_code)` operation's future to succeed.
inline void ok(std::future<std::error_code> f, std::chrono::milliseconds t = 30s) {
    const auto ec = wait(std::move(f), t);
    REQUIRE_MESSAGE(!ec, "operation failed: " << ec.message());
}

inline std::string inbox::subscribe(const amqp::channel& ch, const std::string& queue) {
    return value_of(ch.async_consume(consume_opts(queue), handlers(), use_future));
}

}  // namespace amqp_it
