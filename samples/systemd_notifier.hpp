// echo_worker --systemd: tells systemd how the worker is (sd_notify(3),
// libsystemd): READY=1 once consuming, STATUS= with the held and running
// counts (every 2 s when they changed), WATCHDOG=1 every half of
// WATCHDOG_USEC while the consumer's I/O thread answers a probe (what
// /healthz reports; no ping while that thread is stuck, so systemd's
// WatchdogSec= restarts a worker whose I/O thread hangs), and STOPPING=1
// at shutdown. Outside systemd (NOTIFY_SOCKET unset) it sends nothing.
// Compiled only where libsystemd-dev is found (TARRY_SAMPLE_SYSTEMD).
#pragma once

#include "tarry/consumer/consumer.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace sample {

class systemd_notifier {
public:
    /// Reads WATCHDOG_USEC (and WATCHDOG_PID) from the environment; a value
    /// systemd would not set is reported on stderr and the watchdog left
    /// off. `worker` must outlive the notifier.
    explicit systemd_notifier(tarry::consumer& worker);
    /// Stops the status and watchdog thread (no notification sent).
    ~systemd_notifier();
    systemd_notifier(const systemd_notifier&) = delete;
    systemd_notifier& operator=(const systemd_notifier&) = delete;

    /// READY=1 with the first STATUS=; starts the thread. Call once the
    /// consumer consumes (after start()).
    void ready();
    /// STOPPING=1: call as the shutdown begins. Pings go on while the I/O
    /// thread answers, until the notifier is destroyed.
    void stopping();

private:
    void run();
    std::string status() const;

    tarry::consumer& worker_;
    std::string queue_;
    std::chrono::microseconds watchdog_{0};  ///< 0: no watchdog
    std::mutex mutex_;
    std::condition_variable wake_;
    bool quit_ = false;
    bool stopping_ = false;
    /// Set by the probe's completion, which may run after the notifier is
    /// gone (a probe pending while the I/O thread is stuck): shared.
    std::shared_ptr<std::atomic<bool>> answered_ = std::make_shared<std::atomic<bool>>(false);
    std::thread thread_;
};

}  // namespace sample
