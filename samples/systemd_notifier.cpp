#include "systemd_notifier.hpp"

#include <systemd/sd-daemon.h>

#include <cstdio>
#include <cstring>

namespace sample {

namespace {

constexpr std::chrono::seconds status_period{2};

void notify(const std::string& state) {
    if (int r = sd_notify(0, state.c_str()); r < 0)
        std::fprintf(stderr, "echo_worker: sd_notify: %s\n", std::strerror(-r));
}

}  // namespace

systemd_notifier::systemd_notifier(tarry::consumer& worker)
    : worker_(worker), queue_(worker.options().queue) {
    std::uint64_t usec = 0;
    const int r = sd_watchdog_enabled(0, &usec);
    if (r > 0)
        watchdog_ = std::chrono::microseconds(usec);
    else if (r < 0)
        std::fprintf(stderr, "echo_worker: WATCHDOG_USEC: %s; no watchdog pings\n", std::strerror(-r));
}

systemd_notifier::~systemd_notifier() {
    {
        std::lock_guard lock(mutex_);
        quit_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

std::string systemd_notifier::status() const {
    const auto s = worker_.stats();
    const auto h = worker_.health();
    std::string text = h.ready() ? "consuming " + queue_ : "not consuming " + queue_ + " (" + h.reason + ")";
    return text + ": held " + std::to_string(s.held) + ", running " + std::to_string(s.running);
}

void systemd_notifier::ready() {
    notify("READY=1\nSTATUS=" + status());
    thread_ = std::thread([this] { run(); });
}

void systemd_notifier::stopping() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    notify("STOPPING=1\nSTATUS=stopping: " + status());
}

// Two deadlines: the status every status_period (sent when it changed) and,
// with a watchdog, a ping every half of WATCHDOG_USEC. A ping is sent only
// when the probe sent at the previous ping was answered by the consumer's
// I/O thread; a probe still pending is not sent again.
void systemd_notifier::run() {
    using clock = std::chrono::steady_clock;
    const auto ping_period = watchdog_ / 2;
    std::string last_status = status();  // as ready() sent it
    auto next_status = clock::now() + status_period;
    auto next_ping = clock::now() + ping_period;
    bool probe_pending = false;
    const auto probe = [&] {
        probe_pending = true;
        worker_.async_ping([answered = answered_] { answered->store(true); });
    };
    if (watchdog_.count() > 0) probe();
    std::unique_lock lock(mutex_);
    while (!quit_) {
        const auto until = watchdog_.count() > 0 ? std::min(next_status, next_ping) : next_status;
        wake_.wait_until(lock, until, [&] { return quit_; });
        if (quit_) break;
        const auto now = clock::now();
        const bool stopping = stopping_;
        lock.unlock();
        if (watchdog_.count() > 0 && now >= next_ping) {
            next_ping = now + ping_period;
            if (probe_pending && answered_->exchange(false)) probe_pending = false;
            if (!probe_pending) {
                notify("WATCHDOG=1");
                probe();
            }
        }
        if (now >= next_status) {
            next_status = now + status_period;
            const auto text = (stopping ? "stopping: " : "") + status();
            if (text != last_status) notify("STATUS=" + text);
            last_status = text;
        }
        lock.lock();
    }
}

}  // namespace sample
