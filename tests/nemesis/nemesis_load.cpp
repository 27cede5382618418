// The nemesis run's load (see nemesis_load.hpp).
#include "nemesis_load.hpp"

#include "io_thread.hpp"

#include "tarry/amqp/connection.hpp"
#include "tarry/amqp/url.hpp"
#include "tarry/periodic/recurrence.hpp"
#include "tarry/publisher/publisher.hpp"

#include <boost/asio/use_future.hpp>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

namespace nemesis {

namespace {

namespace amqp = tarry::amqp;
using sys = std::chrono::system_clock;
using steady = std::chrono::steady_clock;
using ms = std::chrono::milliseconds;

std::int64_t micros_of(sys::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

/// The schedules: id, spec; "tick" is removed halfway.
constexpr std::pair<const char*, const char*> schedules[] = {
    {"beat", "every 1000ms"}, {"minute", "cron * * * * *"}, {"tick", "every 2000ms"}};
constexpr const char* removed_schedule = "tick";

struct job_info {
    sys::time_point due;
    std::uint32_t fails = 0;
    std::int64_t sleep_ms = 0;
    enum { pending, confirmed, failed } state = pending;
    bool cancelled = false;
};

struct command {
    enum { cancel, reschedule, unschedule } what;
    std::string id;
    sys::time_point new_due;  ///< reschedule
    /// When it was first sent: a try not confirmed may have taken effect.
    std::optional<sys::time_point> first_sent = std::nullopt;
};

/// What the completion handlers share with the load's thread.
struct shared_state {
    std::mutex m;
    std::ofstream ledger;
    std::map<std::string, job_info> jobs;
    std::multimap<steady::time_point, command> commands;
    load_counts c;
    std::size_t in_flight = 0;

    // With m held.
    void write(const std::string& line) {
        ledger << line << '\n';
        ledger.flush();
    }
};

amqp::message job_message(const std::string& id, const job_info& j) {
    amqp::basic_properties p;
    p.message_id = id;
    amqp::field_table headers;
    if (j.fails > 0) headers.set("x-echo-fail", std::int64_t{j.fails});
    if (j.sleep_ms > 0) headers.set("x-echo-sleep-ms", std::int64_t{j.sleep_ms});
    if (!headers.empty()) p.headers = std::move(headers);
    return amqp::message("job " + id, p);
}

}  // namespace

struct load::impl {
    load_options o;
    std::shared_ptr<shared_state> s = std::make_shared<shared_state>();
    // Destroyed in reverse: the publisher, then the connection, then its thread.
    tarry_test::io_thread io;
    std::optional<amqp::connection> conn;
    std::unique_ptr<tarry::publisher> pub;
    std::thread thread;
    std::atomic<bool> publishing{false}, running{false};
    std::mt19937_64 rng;
    std::uint64_t next_id = 0;

    explicit impl(load_options opts) : o(std::move(opts)), rng(o.seed) {}
    ~impl() {
        running = false;
        if (thread.joinable()) thread.join();
        pub.reset();
        if (conn) conn->async_close(boost::asio::use_future).wait_for(std::chrono::seconds(10));
        conn.reset();
    }

    double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); }
    ms uniform_ms(ms a, ms b) {
        return ms(std::uniform_int_distribution<std::int64_t>(a.count(), std::max(a.count(), b.count()))(rng));
    }

    void connect() {
        std::vector<std::string_view> views(o.urls.begin(), o.urls.end());
        auto parsed = amqp::parse_urls(views);
        if (parsed.error) throw std::runtime_error("publisher URLs: " + parsed.detail);
        conn.emplace(io.executor(), parsed.config);
        const auto until = steady::now() + std::chrono::minutes(1);
        for (;;) {
            auto connected = conn->async_connect(boost::asio::use_future);
            if (connected.wait_for(std::chrono::seconds(30)) == std::future_status::ready && !connected.get()) break;
            if (steady::now() >= until) throw std::runtime_error("the publisher could not connect to the cluster");
            std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        pub = std::make_unique<tarry::publisher>(*conn);
    }

    /// Repeats `op` (returning a future<error_code>) until it succeeds; the
    /// time it did.
    template <class Op>
    std::int64_t until_confirmed(const char* what, Op op) {
        for (int attempt = 1;; ++attempt) {
            auto f = op();
            if (f.wait_for(std::chrono::seconds(30)) == std::future_status::ready) {
                const auto ec = f.get();
                if (!ec) return micros_of(sys::now());
                if (attempt >= 20) throw std::runtime_error(std::string(what) + " failed: " + ec.message());
            }
            std::this_thread::sleep_for(std::chrono::seconds(1));
        }
    }

    void upsert_schedules() {
        for (const auto& [id, text] : schedules) {
            const auto parsed = tarry::periodic::parse_spec(text);
            if (!parsed.spec) throw std::runtime_error(std::string("bad spec ") + text + ": " + parsed.detail);
            const auto added = until_confirmed("upsert", [&] {
                return pub->async_upsert_schedule(o.queue, id, *parsed.spec, amqp::message(std::string("tick ") + id),
                                                  boost::asio::use_future);
            });
            std::lock_guard lock(s->m);
            s->write(std::string("schedule ") + id + " " + std::to_string(added) + " " +
                     tarry::periodic::to_string(*parsed.spec));
            ++s->c.schedules;
        }
    }

    void publish_job() {
        const auto now = sys::now();
        const ms room = std::min(o.horizon, std::chrono::duration_cast<ms>(o.end - now));
        if (room.count() < 0) return;
        const ms delta = uniform(0, 1) < 0.25 ? uniform_ms(ms(0), std::min(room, ms(2000))) : uniform_ms(ms(0), room);
        job_info j;
        j.due = std::chrono::floor<std::chrono::microseconds>(now + delta);
        const double f = uniform(0, 1);
        j.fails = f < 0.08 ? 1 : f < 0.12 ? 2 : f < 0.13 ? o.max_attempts : 0;
        if (uniform(0, 1) < 0.1) j.sleep_ms = uniform_ms(ms(20), ms(800)).count();
        const std::string id = "j" + std::to_string(++next_id);
        // A cancel or reschedule, at least 8 s before the job is due.
        std::optional<std::pair<steady::time_point, command>> cmd;
        if (delta >= ms(20'000)) {
            const double k = uniform(0, 1);
            const auto at = uniform_ms(ms(2000), delta - ms(8000));
            if (k < 0.06) {
                cmd.emplace(steady::now() + at, command{command::cancel, id, {}});
            } else if (k < 0.12) {
                const auto from = now + at;
                const ms left = std::min(o.horizon, std::chrono::duration_cast<ms>(o.end - from));
                if (left >= ms(8000))
                    cmd.emplace(steady::now() + at,
                                command{command::reschedule, id,
                                        std::chrono::floor<std::chrono::microseconds>(from + uniform_ms(ms(8000), left))});
            }
        }
        auto msg = job_message(id, j);
        {
            std::lock_guard lock(s->m);
            s->jobs[id] = j;
            ++s->in_flight;
            ++s->c.published;
            if (cmd) s->commands.insert(*cmd);
        }
        pub->async_publish("", o.queue, std::move(msg), tarry::job_schedule::at(j.due),
                           [s = s, id](std::error_code ec) {
                               std::lock_guard lock(s->m);
                               --s->in_flight;
                               auto& job = s->jobs[id];
                               if (ec) {
                                   job.state = job_info::failed;
                                   ++s->c.failed;
                                   return;
                               }
                               job.state = job_info::confirmed;
                               ++s->c.confirmed;
                               s->c.latest_due = std::max(s->c.latest_due, micros_of(job.due));
                               s->write("job " + id + " " + std::to_string(micros_of(job.due)) + " " +
                                        std::to_string(job.fails));
                           });
    }

    /// Issues every command due by now.
    void issue_commands() {
        std::vector<command> due;
        {
            std::lock_guard lock(s->m);
            const auto now = steady::now();
            while (!s->commands.empty() && s->commands.begin()->first <= now) {
                auto cmd = s->commands.begin()->second;
                s->commands.erase(s->commands.begin());
                if (cmd.what != command::unschedule) {
                    const auto& job = s->jobs[cmd.id];
                    if (job.state == job_info::failed) continue;
                    if (job.state == job_info::pending) {  // not confirmed yet: a little later
                        s->commands.emplace(now + ms(500), std::move(cmd));
                        continue;
                    }
                }
                ++s->in_flight;
                due.push_back(std::move(cmd));
            }
        }
        for (auto& cmd : due) issue(std::move(cmd));
    }

    void issue(command cmd) {
        if (!cmd.first_sent) cmd.first_sent = sys::now();
        // A failed command is repeated a second later (it may have taken effect).
        auto done = [s = s](command c, std::error_code ec) {
            std::lock_guard lock(s->m);
            --s->in_flight;
            if (ec) {
                ++s->c.repeated;
                // Its copy may be stored all the same (its confirm lost).
                if (c.what == command::reschedule)
                    s->write("unconfirmed " + c.id + " " + std::to_string(micros_of(c.new_due)));
                s->commands.emplace(steady::now() + ms(1000), std::move(c));
                return;
            }
            const auto confirmed = std::to_string(micros_of(sys::now()));
            switch (c.what) {
                case command::cancel:
                    s->jobs[c.id].cancelled = true;
                    ++s->c.cancels;
                    s->write("cancel " + c.id + " " + confirmed);
                    break;
                case command::reschedule:
                    s->jobs[c.id].due = c.new_due;
                    ++s->c.reschedules;
                    s->c.latest_due = std::max(s->c.latest_due, micros_of(c.new_due));
                    s->write("reschedule " + c.id + " " + std::to_string(micros_of(c.new_due)) + " " + confirmed);
                    break;
                case command::unschedule:
                    ++s->c.unschedules;
                    s->write("unschedule " + c.id + " " + confirmed + " " +
                             std::to_string(micros_of(*c.first_sent)));  // set by issue()
                    break;
            }
        };
        switch (cmd.what) {
            case command::cancel: {
                auto id = cmd.id;
                pub->async_cancel(o.queue, id, [done, c = std::move(cmd)](std::error_code ec) { done(c, ec); });
                break;
            }
            case command::reschedule: {
                // Repeated late (a fault held it up): due a few seconds from now instead.
                const auto soonest = std::chrono::floor<std::chrono::microseconds>(sys::now() + ms(5000));
                if (cmd.new_due < soonest) cmd.new_due = soonest;
                job_info j;
                {
                    std::lock_guard lock(s->m);
                    j = s->jobs[cmd.id];
                }
                auto id = cmd.id;
                const auto when = tarry::job_schedule::at(cmd.new_due);
                pub->async_reschedule(o.queue, id, when, job_message(id, j),
                                      [done, c = std::move(cmd)](std::error_code ec) { done(c, ec); });
                break;
            }
            case command::unschedule: {
                auto id = cmd.id;
                pub->async_remove_schedule(o.queue, id, [done, c = std::move(cmd)](std::error_code ec) { done(c, ec); });
                break;
            }
        }
    }

    void run() {
        const auto started = steady::now();
        const auto removal = started + (o.end - sys::now()) / 2;
        bool removed = false;
        double owed = 0;
        auto last = started;
        while (running) {
            std::this_thread::sleep_for(ms(50));
            const auto now = steady::now();
            if (publishing && sys::now() < o.end) {
                owed += o.rate * std::chrono::duration<double>(now - last).count();
                for (; owed >= 1; owed -= 1) publish_job();
            }
            last = now;
            if (!removed && now >= removal) {
                removed = true;
                std::lock_guard lock(s->m);
                s->commands.emplace(now, command{command::unschedule, removed_schedule, {}});
            }
            issue_commands();
        }
    }
};

load::load(load_options o, const std::string& ledger_path) : p_(std::make_unique<impl>(std::move(o))) {
    p_->s->ledger.open(ledger_path, std::ios::app);
    if (!p_->s->ledger) throw std::runtime_error("cannot write " + ledger_path);
}

load::~load() = default;

void load::start() {
    p_->connect();
    p_->upsert_schedules();
    p_->publishing = true;
    p_->running = true;
    p_->thread = std::thread([p = p_.get()] { p->run(); });
}

void load::stop(std::chrono::milliseconds t) {
    p_->publishing = false;
    const auto until = steady::now() + t;
    for (;;) {
        {
            std::lock_guard lock(p_->s->m);
            if (p_->s->in_flight == 0 && p_->s->commands.empty()) break;
        }
        if (steady::now() >= until) break;
        std::this_thread::sleep_for(ms(100));
    }
    p_->running = false;
    if (p_->thread.joinable()) p_->thread.join();
}

load_counts load::counts() const {
    std::lock_guard lock(p_->s->m);
    return p_->s->c;
}

std::vector<std::string> load::live_jobs() const {
    std::lock_guard lock(p_->s->m);
    std::vector<std::string> ids;
    for (const auto& [id, j] : p_->s->jobs)
        if (j.state == job_info::confirmed && !j.cancelled) ids.push_back(id);
    return ids;
}

}  // namespace nemesis
