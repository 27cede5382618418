// compare_bench's contenders (see compare_contenders.hpp).
#include "compare_contenders.hpp"

#include "cascade_setup.hpp"
#include "child_program.hpp"

#include "tarry/publisher/publisher.hpp"
#include "tarry/time/epoch_text.hpp"

#include <boost/asio/use_future.hpp>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <unistd.h>

namespace cbench {

using boost::asio::use_future;

namespace {

using publish_fn = std::function<void(const std::string& id, std::optional<sys::time_point> due)>;

/// Publishes the plan's phases in order, `confirm_all` between them; a job
/// is due its delay after its phase began. When each phase began.
std::vector<double> publish_phases(const plan& p, const publish_fn& publish, const std::function<void()>& confirm_all) {
    std::vector<double> began;
    for (const auto& phase : p.phases) {
        const auto t = sys::now();
        began.push_back(tarry::epoch_seconds_number(t));
        for (const auto& j : phase)
            publish(j.id, j.delay ? std::optional(to_micros(t + *j.delay)) : std::nullopt);
        confirm_all();
    }
    return began;
}

/// Confirmed raw publishes of job messages (perform_job_at) to `queue`.
std::vector<double> publish_jobs(endpoint& admin, const std::string& queue, const plan& p) {
    confirmed_publisher pub(admin);
    return publish_phases(
        p, [&](const std::string& id, std::optional<sys::time_point> due) { pub.publish(queue, job_message(id, due)); },
        [&] { pub.wait_all(); });
}

/// When a run stops waiting: the last due time of the jobs that count plus
/// the grace, or the time limit from now when they are due now.
sys::time_point deadline_of(const plan& p, const std::vector<double>& phase_began_s) {
    const auto last = last_counted_due(p, phase_began_s);
    if (!last) return sys::now() + p.time_limit;
    return sys::time_point(std::chrono::duration_cast<sys::duration>(std::chrono::duration<double>(*last + p.counted.grace_s)));
}

/// The starts an external contender prints until every counted job started
/// or `deadline`.
std::vector<job_start> collect(child_program& child, const counted_jobs& counted, sys::time_point deadline,
                               std::vector<job_start> starts = {}) {
    std::size_t counted_starts = 0;
    for (const auto& s : starts) counted_starts += counted.counts(s.id);
    while (counted_starts < counted.count && sys::now() < deadline && !child.ended())
        for (const auto& line : child.new_lines(100ms))
            if (auto s = parse_start_line(line)) {
                counted_starts += counted.counts(s->id);
                starts.push_back(std::move(*s));
            }
    return starts;
}

std::string python() { return "/usr/bin/python3"; }

}  // namespace

contender_run run_tarry(const context& cx, const plan& p) {
    endpoint admin(cx.config);
    const auto opts = options_for(cx, fresh_queue_name("compare-" + p.name));
    declare_work_queue(admin, opts.queue);
    run_log log(p.counted.prefix);
    contender_run r;
    std::vector<double> began;
    if (p.prefill) began = publish_jobs(admin, opts.queue, p);
    {
        tarry::consumer c(cx.config, opts, [](const tarry::job&) { return tarry::job_outcome::success(); },
                          log.hooks());
        c.start();
        const auto p0 = steady::now();
        if (!p.prefill) {
            began = publish_jobs(admin, opts.queue, p);
            r.publish_s = seconds_since(p0);
        }
        const auto deadline = deadline_of(p, began);
        log.wait_runs(p.counted.count,
                      std::chrono::duration_cast<std::chrono::milliseconds>(std::max(deadline - sys::now(), sys::duration{})));
        c.stop();
    }
    delete_queues(admin, opts);
    for (const auto& x : log.runs())
        r.starts.push_back({p.counted.prefix + std::to_string(x.index), tarry::epoch_seconds_number(x.at),
                            p.prefill ? std::nullopt : std::optional<double>(tarry::epoch_seconds_number(x.due))});
    return r;
}

contender_run run_naive(const context& cx, const plan& p) {
    endpoint admin(cx.config);
    const auto opts = options_for(cx, fresh_queue_name("compare-naive-" + p.name));
    declare_work_queue(admin, opts.queue);
    contender_run r;
    std::vector<double> began;
    if (p.prefill) began = publish_jobs(admin, opts.queue, p);
    {
        child_program child({python(), cx.source_root + "/bench/naive_sleep_consumer.py", cx.url, opts.queue,
                             std::to_string(naive_prefetch)});
        if (child.wait_for_line("ready", 30s).empty()) die("naive_sleep_consumer.py did not start");
        const auto p0 = steady::now();
        if (!p.prefill) {
            began = publish_jobs(admin, opts.queue, p);
            r.publish_s = seconds_since(p0);
        }
        r.starts = collect(child, p.counted, deadline_of(p, began));
        child.stop();
    }
    delete_queues(admin, opts);
    return r;
}

contender_run run_celery(const context& cx, const plan& p, const std::string& variant) {
    endpoint admin(cx.config);
    const auto queue = fresh_queue_name("compare-celery-" + variant + "-" + p.name);
    char path[] = "/tmp/tarry-compare-plan-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd < 0) die("cannot write a plan file");
    ::close(fd);
    std::ofstream(path) << plan_text(p);
    contender_run r;
    {
        child_program child({python(), cx.source_root + "/bench/celery_eta_bench.py", cx.url, queue, variant, path});
        // The runner publishes before it starts the worker when prefilling.
        if (child.wait_for_line("ready", p.prefill ? 300s : 60s).empty())
            die("celery_eta_bench.py: the worker did not start");
        const auto p0 = steady::now();
        // "phase K BEGAN" as each phase begins, then "published".
        std::vector<std::string> before_published;
        std::vector<double> began;
        for (bool done = false; !done;) {
            if (child.ended() || steady::now() - p0 > 300s) die("celery_eta_bench.py did not publish");
            for (auto& line : child.new_lines(100ms)) {
                if (line.rfind("phase ", 0) == 0)
                    began.push_back(std::atof(line.c_str() + line.find(' ', 6)));
                else if (line == "published")
                    done = true;
                else
                    before_published.push_back(std::move(line));
            }
        }
        if (!p.prefill) r.publish_s = seconds_since(p0);
        for (const auto& line : before_published)
            if (auto s = parse_start_line(line)) r.starts.push_back(std::move(*s));
        r.starts = collect(child, p.counted, deadline_of(p, began), std::move(r.starts));
        child.stop();
    }
    ::unlink(path);
    auto ch = admin.open_channel();
    ch.async_delete_queue(queue, {}, use_future).wait_for(30s);
    ch.async_delete_exchange(queue, {}, use_future).wait_for(30s);
    return r;
}

contender_run run_cascade(const context& cx, const plan& p) {
    if (p.prefill) die("the cascade alone has nothing to delay in " + p.name);
    tarry::parking::cascade_spec spec;
    spec.levels = 17;  // 131 071 units of 1 ms
    spec.unit = 1ms;
    spec.prefix = fresh_queue_name("compare-cascade");
    const tarry::parking::delay_cascade cascade(spec);
    endpoint admin(cx.config);
    declare_cascade(admin, cascade);
    const auto queue = fresh_queue_name("compare-cascade-dest-" + p.name);
    declare_work_queue(admin, queue);

    std::mutex mu;
    std::condition_variable cv;
    contender_run r;
    std::size_t counted_starts = 0;
    // A plain consumer on a connection of its own (closed before what its
    // handler touches goes): start = delivery.
    endpoint consumer(cx.config);
    amqp::qos_options qos;
    qos.prefetch_count = naive_prefetch;
    check(consumer.ch.async_qos(qos, use_future).get(), "qos");
    amqp::consumer_handlers h;
    h.on_delivery = [&, ch = consumer.ch](amqp::delivery d) {
        const double at = tarry::epoch_seconds_number(sys::now());
        ch.async_ack(d.delivery_tag, {}, [](std::error_code) {});
        std::lock_guard lock(mu);
        const auto id = d.msg.properties.message_id.value_or("");
        counted_starts += p.counted.counts(id);
        r.starts.push_back({id, at, std::nullopt});
        cv.notify_all();
    };
    amqp::consume_options co;
    co.queue = queue;
    auto [ce, tag] = consumer.ch.async_consume(co, std::move(h), use_future).get();
    check(ce, "consuming the cascade's destination");

    std::map<std::string, double> due_of;
    tarry::publisher_options po;
    po.delay_cascade = spec;
    {
        tarry::publisher pub(admin.conn, po);
        std::vector<std::future<std::error_code>> confirms;
        const auto p0 = steady::now();
        const auto began = publish_phases(
            p,
            [&](const std::string& id, std::optional<sys::time_point> due) {
                {
                    std::lock_guard lock(mu);
                    due_of[id] = tarry::epoch_seconds_number(*due);
                }
                const auto delay = std::chrono::ceil<std::chrono::milliseconds>(*due - sys::now());
                confirms.push_back(pub.async_publish_delayed("", queue, job_message(id, due), delay, use_future));
            },
            [&] {
                for (auto& f : confirms) check(f.get(), "publishing into the cascade");
                confirms.clear();
            });
        r.publish_s = seconds_since(p0);
        std::unique_lock lock(mu);
        cv.wait_until(lock, deadline_of(p, began), [&] { return counted_starts >= p.counted.count; });
    }
    consumer.ch.async_cancel(tag, use_future).wait_for(10s);
    {
        std::lock_guard lock(mu);
        for (auto& s : r.starts)
            if (auto d = due_of.find(s.id); d != due_of.end()) s.due_s = d->second;
    }
    auto ch = admin.open_channel();
    ch.async_delete_queue(queue, {}, use_future).wait_for(30s);
    delete_cascade(admin, cascade, {queue});
    return r;
}

}  // namespace cbench
