// T's rounds, one contender each (see throughput_rounds.hpp).
#include "throughput_rounds.hpp"

#include "raw_consume_loop.hpp"

#include <boost/asio/use_future.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <limits>
#include <optional>

namespace cbench {

namespace {

/// Where the lifecycle events of `work_queue` go while T runs with events
/// on: a queue bound to the events exchange (declared as the consumer
/// declares it), deleted afterwards.
struct event_sink {
    event_sink(endpoint& admin, const tarry::subscription_options& o) : admin_(admin), name_(o.queue + ".events") {
        amqp::exchange_options x;
        x.name = o.events_exchange;
        x.type = "topic";
        x.durable = true;
        check(admin.ch.async_declare_exchange(x, boost::asio::use_future).get(), "declaring the events exchange");
        amqp::queue_options q;
        q.name = name_;
        q.durable = true;  // RabbitMQ 4.3 refuses transient non-exclusive queues
        check(std::get<0>(admin.ch.async_declare_queue(q, boost::asio::use_future).get()), "declaring " + name_);
        check(admin.ch.async_bind_queue(name_, o.events_exchange, "#." + o.queue, {}, boost::asio::use_future).get(),
              "binding " + name_);
    }
    ~event_sink() { admin_.ch.async_delete_queue(name_, {}, boost::asio::use_future).wait_for(30s); }
    event_sink(const event_sink&) = delete;
    event_sink& operator=(const event_sink&) = delete;

private:
    endpoint& admin_;
    std::string name_;
};

}  // namespace

void prepublish(endpoint& admin, const std::string& queue, std::size_t n) {
    confirmed_publisher pub(admin);
    for (std::size_t i = 0; i < n; ++i) pub.publish(queue, job_message("T" + std::to_string(i), std::nullopt));
    pub.wait_all();
}

double tarry_round(const context& cx, endpoint& admin, tarry::consumer_stats& st, events_mode events,
                   std::size_t n) {
    auto opts = options_for(cx, fresh_queue_name("throughput"));
    opts.publish_events = events != events_mode::off;
    if (events == events_mode::batched) opts.events_per_message = batch_events;
    declare_work_queue(admin, opts.queue);
    prepublish(admin, opts.queue, n);
    std::optional<event_sink> sink;
    if (events == events_mode::sunk || events == events_mode::batched) sink.emplace(admin, opts);
    std::atomic<std::int64_t> first{std::numeric_limits<std::int64_t>::max()};
    std::atomic<std::size_t> done{0};
    std::atomic<std::int64_t> last{0};
    std::promise<void> all;
    tarry::consumer_hooks hooks;
    hooks.on_event = [&](const tarry::job_event& e) {
        const std::int64_t at = e.at.time_since_epoch().count();
        if (e.what == tarry::job_event::kind::run) {
            auto seen = first.load();
            while (at < seen && !first.compare_exchange_weak(seen, at)) {
            }
        } else if (e.what == tarry::job_event::kind::succeeded) {
            auto seen = last.load();
            while (at > seen && !last.compare_exchange_weak(seen, at)) {
            }
            if (++done == n) all.set_value();
        }
    };
    bool finished = false;
    {
        tarry::consumer c(cx.config, opts, [](const tarry::job&) { return tarry::job_outcome::success(); },
                          hooks);
        c.start();
        finished = all.get_future().wait_for(120s) == std::future_status::ready;
        st = c.stats();
        c.stop();
    }
    delete_queues(admin, opts);
    if (!finished) die("throughput: the consumer did not finish " + std::to_string(n) + " jobs in 120 s");
    return static_cast<double>(n) / std::chrono::duration<double>(sys::duration(last - first)).count();
}

double raw_round(const context& cx, endpoint& admin, std::uint16_t prefetch, std::size_t n) {
    const auto opts = options_for(cx, fresh_queue_name("throughput-raw"));
    declare_work_queue(admin, opts.queue);
    prepublish(admin, opts.queue, n);
    const double rate = raw_consume_rate({cx.config}, opts.queue, n, prefetch);
    delete_queues(admin, opts);
    return rate;
}

double program_round(const context& cx, endpoint& admin, const std::string& what, const std::string& command,
                     std::uint16_t prefetch, std::size_t n) {
    const auto opts = options_for(cx, fresh_queue_name("throughput-" + what));
    declare_work_queue(admin, opts.queue);
    prepublish(admin, opts.queue, n);
    const auto out = run_command(command + " '" + cx.url + "' '" + opts.queue + "' " + std::to_string(n) + " " +
                                 std::to_string(prefetch));
    delete_queues(admin, opts);
    const auto at = out.find("\"consume_ack_per_s\": ");
    if (at == std::string::npos) die(what + " printed: " + out);
    return std::atof(out.c_str() + at + 21);
}

double pika_round(const context& cx, endpoint& admin, std::uint16_t prefetch, std::size_t n) {
    return program_round(cx, admin, "pika", "/usr/bin/python3 '" + cx.source_root + "/bench/pika_consume.py'",
                         prefetch, n);
}

double rabbitmq_c_round(const context& cx, endpoint& admin, std::uint16_t prefetch, std::size_t n) {
    const auto program = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "rabbitmq_c_consume";
    if (!std::filesystem::exists(program)) die(program.string() + " is missing: build it (ninja bench/rabbitmq_c_consume)");
    return program_round(cx, admin, "rabbitmq-c", "'" + program.string() + "'", prefetch, n);
}

}  // namespace cbench
