// Integration-test helpers for the scheduling consumer: an event log the
// tests wait on, a consumer started against a broker URL, and raw publishes
// with any schedule header (so every encoding can be sent as it is).
#pragma once

#include "amqp_client.hpp"
#include "private_broker.hpp"
#include "tcp_relay.hpp"

#include "tarry/amqp/url.hpp"
#include "tarry/consumer/consumer.hpp"
#include "tarry/parking/wait_ladder.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <future>
#include <sstream>
#include <thread>
#include <vector>

namespace consumer_it {

using namespace amqp_it;
using tarry::job_event;
using kind = tarry::job_event::kind;
using sys = std::chrono::system_clock;

/// Every event a consumer emitted, for the test thread to wait on.
class event_log {
public:
    void add(const job_event& e) {
        std::lock_guard lock(m_);
        events_.push_back(e);
        cv_.notify_all();
    }
    /// Waits until pred(events) holds or `t` passes; the final answer.
    bool wait_until(const std::function<bool(const std::vector<job_event>&)>& pred,
                    std::chrono::milliseconds t) {
        std::unique_lock lock(m_);
        return cv_.wait_for(lock, t, [&] { return pred(events_); });
    }
    /// Waits until `n` events of kind `k` were seen.
    bool wait_count(kind k, std::size_t n, std::chrono::milliseconds t) {
        return wait_until([&](const auto& es) { return count_in(es, k) >= n; }, t);
    }
    std::vector<job_event> of(kind k) {
        std::lock_guard lock(m_);
        std::vector<job_event> out;
        for (const auto& e : events_)
            if (e.what == k) out.push_back(e);
        return out;
    }
    std::size_t count(kind k) {
        std::lock_guard lock(m_);
        return count_in(events_, k);
    }
    /// The event of kind k for message id, if any.
    std::optional<job_event> find(kind k, const std::string& id) {
        std::lock_guard lock(m_);
        for (const auto& e : events_)
            if (e.what == k && e.id == id) return e;
        return std::nullopt;
    }

private:
    static std::size_t count_in(const std::vector<job_event>& es, kind k) {
        return static_cast<std::size_t>(
            std::count_if(es.begin(), es.end(), [&](const job_event& e) { return e.what == k; }));
    }
    std::mutex m_;
    std::condition_variable cv_;
    std::vector<job_event> events_;
};

inline tarry::job_outcome succeed(const tarry::job&) { return tarry::job_outcome::success(); }

/// Options for a fresh work queue (deleted with its satellites by cleanup()).
inline tarry::subscription_options options_for(const std::string& queue) {
    tarry::subscription_options o;
    o.queue = queue;
    o.workers = 4;
    o.shutdown_grace = std::chrono::seconds(5);
    return o;
}

/// A relay in front of the broker at `url`, for tests that cut the
/// consumer's connection.
inline tarry_test::tcp_relay relay_to(const std::string& url) {
    const auto direct = config_of(url);
    return tarry_test::tcp_relay(direct.host, direct.effective_port());
}
/// `url`'s connection config through `relay`, reconnecting every `every`.
inline amqp::connection_config through(const tarry_test::tcp_relay& relay, const std::string& url,
                                       std::chrono::milliseconds every) {
    auto cfg = config_of(url);
    cfg.port = relay.port();
    cfg.reconnect_backoff = tarry::retry::backoff_policy::fixed(every);
    return cfg;
}

/// A started consumer whose events land in `log`.
struct running_consumer {
    running_consumer(const std::string& url, tarry::subscription_options o,
                     tarry::job_handler h = succeed)
        : running_consumer(config_of(url), std::move(o), std::move(h)) {}
    running_consumer(amqp::connection_config cfg, tarry::subscription_options o,
                     tarry::job_handler h = succeed)
        : worker(std::move(cfg), std::move(o), std::move(h), hooks()) {
        worker.start();
    }
    tarry::consumer_hooks hooks() {
        tarry::consumer_hooks hk;
        hk.on_event = [this](const job_event& e) { log.add(e); };
        hk.on_connection = [this](const std::string& what) {
            std::lock_guard lock(lines_mutex);
            connection_lines.push_back(what);
        };
        return hk;
    }
    /// How many on_connection lines so far say a connection was lost.
    std::size_t connections_lost() {
        std::lock_guard lock(lines_mutex);
        return static_cast<std::size_t>(std::count_if(connection_lines.begin(), connection_lines.end(),
                                                      [](const std::string& l) { return l.find("lost: ") != std::string::npos; }));
    }
    /// Every on_connection line so far, one per line (for failure messages).
    std::string connection_transcript() {
        std::lock_guard lock(lines_mutex);
        std::string s;
        for (const auto& l : connection_lines) s += l + "\n";
        return s;
    }
    event_log log;
    std::mutex lines_mutex;
    std::vector<std::string> connection_lines;  ///< guarded by lines_mutex
    tarry::consumer worker;
};

/// Epoch seconds as a double (perform_job_at's usual encoding).
inline double epoch(sys::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

/// Publishes one message to `queue` with message_id `id` and the given
/// headers, with a confirm (the channel must be in confirm mode).
inline void publish_raw(const amqp::channel& ch, const std::string& queue, const std::string& id,
                        amqp::field_table headers, amqp::basic_properties p = {}) {
    p.message_id = id;
    if (!headers.empty()) p.headers = std::move(headers);
    ok(ch.async_publish("", queue, amqp::message("job " + id, p), {}, use_future));
}

/// A confirm channel on `c`.
inline amqp::channel confirm_channel(connected_client& c) {
    auto ch = c.open_channel();
    ok(ch.async_confirm_select(use_future));
    return ch;
}

/// Publishes one persistent job per due time, ids `prefix-0`, `prefix-1`...
/// (perform_job_at, a double, and the `extra` headers), all in flight at
/// once and each confirmed; the due of each id in microseconds.
inline std::map<std::string, std::int64_t> publish_many(const std::string& url, const std::string& q,
                                                        const std::string& prefix,
                                                        const std::vector<sys::time_point>& dues,
                                                        const amqp::field_table& extra = {}) {
    connected_client c(url);
    auto ch = confirm_channel(c);
    std::map<std::string, std::int64_t> out;
    std::vector<std::future<std::error_code>> confirms;
    confirms.reserve(dues.size());
    for (std::size_t i = 0; i < dues.size(); ++i) {
        amqp::basic_properties p;
        p.message_id = prefix + "-" + std::to_string(i);
        p.delivery_mode = 2;
        const double at = epoch(dues[i]);
        p.headers = extra;
        p.headers->set("perform_job_at", at);
        out[*p.message_id] = std::llround(at * 1e6);
        confirms.push_back(ch.async_publish("", q, amqp::message("job", p), {}, use_future));
    }
    for (auto& f : confirms) REQUIRE_FALSE(f.get());
    return out;
}


/// The work queue and every queue the consumer declares beside it
/// (dead-letter queue, the parking ladder's wait queues).
inline std::vector<std::string> queue_names(const tarry::subscription_options& o) {
    std::vector<std::string> names{o.queue, o.dead_letter_queue_name()};
    const tarry::parking::wait_ladder ladder(o.queue, o.effective_min_park_ttl(), o.hold_horizon);
    for (const auto& w : ladder.queues()) names.push_back(w.name);
    return names;
}

/// Deletes the work queue and the consumer's satellites (dead-letter and
/// wait queues).
inline void cleanup(connected_client& c, const tarry::subscription_options& o) {
    auto ch = c.open_channel();
    auto names = queue_names(o);
    for (const auto& n : names) ch.async_delete_queue(n, {}, use_future).wait_for(10s);
}

/// Messages in the dead-letter queue, fetched with basic.get (acked).
inline std::vector<amqp::message> dead_letters(connected_client& c, const tarry::subscription_options& o) {
    auto ch = c.open_channel();
    std::vector<amqp::message> out;
    for (;;) {
        auto got = value_of(ch.async_get(o.dead_letter_queue_name(), {.no_ack = true}, use_future));
        if (!got) break;
        out.push_back(std::move(got->item.msg));
    }
    return out;
}

/// The x-tarry-reason of a dead letter ("" if absent).
inline std::string reason_of(const amqp::message& m) {
    if (!m.properties.headers) return "";
    const auto* v = m.properties.headers->find("x-tarry-reason");
    const auto* s = v ? v->get_if<std::string>() : nullptr;
    return s ? *s : "";
}

/// Polls the consumer's counters until `pred` holds of them or `t` passes.
template <class Pred>
bool wait_stats(running_consumer& rc, Pred pred, std::chrono::milliseconds t = std::chrono::seconds(10)) {
    const auto deadline = std::chrono::steady_clock::now() + t;
    while (!pred(rc.worker.stats()) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return pred(rc.worker.stats());
}

/// Waits up to `t` until the consumer holds `n` jobs; whether it holds exactly `n`.
inline bool wait_held(running_consumer& rc, std::size_t n, std::chrono::milliseconds t = std::chrono::seconds(10)) {
    wait_stats(rc, [n](const tarry::consumer_stats& s) { return s.held >= n; }, t);
    return rc.worker.stats().held == n;
}

/// Declares a fresh durable queue, a unique name after `prefix`, with
/// `args`; returns its name (the test deletes it).
inline std::string declare_fresh_queue(connected_client& c, const std::string& prefix, amqp::field_table args = {}) {
    const auto q = unique_name(prefix);
    value_of(c.open_channel().async_declare_queue(queue_opts(q, false, true, std::move(args)), use_future));
    return q;
}

/// How late a job may start in these tests, in milliseconds: generous, for
/// a shared 2-core machine (bench/ measures lateness precisely). What must
/// hold exactly: never early.
inline constexpr double late_ms = 250.0;

/// Lateness of a run event in milliseconds (at − due).
inline double lateness_ms(const job_event& e) {
    return std::chrono::duration<double, std::milli>(e.at - e.due).count();
}

/// The queue's unacknowledged messages as the broker counts them (rabbitmqctl).
inline std::size_t unacked_in(tarry_test::private_broker& broker, const std::string& queue) {
    auto r = broker.ctl({"list_queues", "name", "messages_unacknowledged", "--no-table-headers", "--quiet"});
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    std::istringstream lines(r.out);
    for (std::string name, count; lines >> name >> count;)
        if (name == queue) return std::stoul(count);
    FAIL("no queue " << queue);
    return 0;
}

}  // namespace consumer_it
