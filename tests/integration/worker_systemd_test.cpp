// echo_worker --systemd without systemd: the test stands in for it with a
// unix datagram socket named by NOTIFY_SOCKET and a WATCHDOG_USEC of its
// own, and reads what the worker tells it: READY=1 once consuming, STATUS=
// with the held and running counts, WATCHDOG=1 every half of WATCHDOG_USEC
// while the consumer's I/O thread answers and none while it is stalled (a
// job with x-echo-block-ms under --async blocks that thread), STOPPING=1 at
// SIGTERM. In a build without libsystemd, --systemd is refused (exit 2).
#include "private_broker.hpp"
#include "worker_process.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>

using namespace consumer_it;

namespace {

#ifdef TARRY_SAMPLE_SYSTEMD

/// systemd's notify socket, as a test sees it: every datagram received,
/// with the time it arrived, read by a thread of its own so that the times
/// do not depend on when the test looks.
class notify_socket {
public:
    struct datagram {
        steady::time_point at;
        std::string text;
        bool has_line(const std::string& line) const {
            return ("\n" + text + "\n").find("\n" + line + "\n") != std::string::npos;
        }
        /// The value of `KEY=` in it ("" when absent).
        std::string value_of(const std::string& key) const {
            const auto from = ("\n" + text).find("\n" + key + "=");
            if (from == std::string::npos) return {};
            const auto begin = from + key.size() + 1;
            return text.substr(begin, text.find('\n', begin) - begin);
        }
    };

    explicit notify_socket(std::string path) : path_(std::move(path)) {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        REQUIRE(fd_ >= 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        REQUIRE(path_.size() < sizeof a.sun_path);
        std::copy(path_.begin(), path_.end(), a.sun_path);
        ::unlink(path_.c_str());
        REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
        reader_ = std::thread([this] { read_all(); });
    }
    ~notify_socket() {
        quit_ = true;
        reader_.join();
        ::close(fd_);
        ::unlink(path_.c_str());
    }
    const std::string& path() const { return path_; }

    std::vector<datagram> received() const {
        std::lock_guard lock(mutex_);
        return received_;
    }
    /// Waits up to `t` for a datagram with the line `line`; the first one.
    std::optional<datagram> wait_for(const std::string& line, std::chrono::milliseconds t) const {
        const auto until = steady::now() + t;
        for (;;) {
            for (const auto& d : received())
                if (d.has_line(line)) return d;
            if (steady::now() >= until) return std::nullopt;
            std::this_thread::sleep_for(20ms);
        }
    }
    /// When each WATCHDOG=1 arrived, in [from, to).
    std::vector<steady::time_point> pings(steady::time_point from, steady::time_point to) const {
        std::vector<steady::time_point> out;
        for (const auto& d : received())
            if (d.has_line("WATCHDOG=1") && d.at >= from && d.at < to) out.push_back(d.at);
        return out;
    }
    /// Every STATUS= value, in order.
    std::vector<std::string> statuses() const {
        std::vector<std::string> out;
        for (const auto& d : received())
            if (auto s = d.value_of("STATUS"); !s.empty()) out.push_back(s);
        return out;
    }
    std::string transcript() const {
        std::string s;
        for (const auto& d : received()) s += "[" + d.text + "] ";
        return s;
    }

private:
    void read_all() {
        char buf[4096];
        while (!quit_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 20) <= 0) continue;
            const auto n = ::recv(fd_, buf, sizeof buf, 0);
            if (n <= 0) continue;
            std::lock_guard lock(mutex_);
            received_.push_back({steady::now(), std::string(buf, static_cast<std::size_t>(n))});
        }
    }

    std::string path_;
    int fd_ = -1;
    std::atomic<bool> quit_{false};
    mutable std::mutex mutex_;
    std::vector<datagram> received_;
    std::thread reader_;
};

/// An environment variable set while it lives (the child copies the
/// environment when it is spawned).
struct scoped_env {
    std::string name;
    scoped_env(std::string n, const std::string& value) : name(std::move(n)) { ::setenv(name.c_str(), value.c_str(), 1); }
    ~scoped_env() { ::unsetenv(name.c_str()); }
};

std::chrono::milliseconds between(steady::time_point a, steady::time_point b) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(b - a);
}

#endif

}  // namespace

#ifdef TARRY_SAMPLE_SYSTEMD

TEST_CASE("echo_worker --systemd: READY once consuming, STATUS with its counts, WATCHDOG=1 at half of "
          "WATCHDOG_USEC and none while the I/O thread is stalled, STOPPING at SIGTERM") {
    TARRY_REQUIRE_BROKER(url);
    const auto watchdog = 1000ms;  // WATCHDOG_USEC: a ping every 500 ms
    notify_socket systemd("/tmp/tarry-notify-" + std::to_string(::getpid()));
    const std::string q = unique_name("systemd");
    queue_guard guard(url, q);
    std::unique_ptr<worker_process> made;
    {
        scoped_env socket("NOTIFY_SOCKET", systemd.path());
        scoped_env usec("WATCHDOG_USEC", std::to_string(std::chrono::microseconds(watchdog).count()));
        made = std::make_unique<worker_process>(url, q, std::vector<std::string>{"--systemd", "--async"});
    }
    worker_process& w = *made;
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    const auto ready = systemd.wait_for("READY=1", 5s);
    REQUIRE_MESSAGE(ready, systemd.transcript());
    CHECK_MESSAGE(ready->value_of("STATUS") == "consuming " + q + ": held 0, running 0", ready->text);
    CHECK_MESSAGE(systemd.pings(steady::time_point{}, ready->at).empty(), "a ping before READY=1");

    // Healthy: a ping every half of WATCHDOG_USEC.
    std::this_thread::sleep_for(3s);
    const auto healthy = systemd.pings(ready->at, steady::now());
    CHECK_MESSAGE(healthy.size() >= 4, systemd.transcript());
    CHECK_MESSAGE(healthy.size() <= 7, systemd.transcript());
    for (std::size_t i = 1; i < healthy.size(); ++i)
        CHECK_MESSAGE(between(healthy[i - 1], healthy[i]) >= 450ms, systemd.transcript());

    // A job held for a minute, and one that blocks the I/O thread for 3 s.
    connected_client c(url);
    auto ch = confirm_channel(c);
    publish_raw(ch, q, "held", {{"perform_job_at", epoch(sys::now() + 60s)}});
    publish_raw(ch, q, "stall", {{"perform_job_at", epoch(sys::now())}, {"x-echo-block-ms", std::int32_t{3000}}});
    REQUIRE_MESSAGE(w.wait_count("run", 1, 10s), w.transcript());
    const auto stall_seen = steady::now();  // the stall began a little before
    REQUIRE_MESSAGE(w.wait_count("succeeded", 1, 10s), w.transcript());
    const auto stall_over = steady::now();  // the stall ended a little before
    CHECK(between(stall_seen, stall_over) >= 2500ms);
    std::this_thread::sleep_for(1500ms);

    // One ping may still go out on the probe answered before the stall;
    // after that, none until the I/O thread answers again.
    const auto during = systemd.pings(stall_seen + 600ms, stall_over - 100ms);
    CHECK_MESSAGE(during.empty(), "pings while the I/O thread was stalled: " << systemd.transcript());
    const auto after = systemd.pings(stall_over, steady::now());
    CHECK_MESSAGE(after.size() >= 2, "no pings after the stall: " << systemd.transcript());

    const auto statuses = systemd.statuses();
    const bool running_shown = std::any_of(statuses.begin(), statuses.end(), [](const std::string& s) {
        return s.find("held 1, running 1") != std::string::npos;
    });
    CHECK_MESSAGE(running_shown, systemd.transcript());

    w.signal(SIGTERM);
    const auto stopping = systemd.wait_for("STOPPING=1", 10s);
    CHECK_MESSAGE(stopping, systemd.transcript());
    const auto code = w.wait_exit(30s);
    REQUIRE_MESSAGE(code.has_value(), w.transcript());
    CHECK(*code == 0);
}

TEST_CASE("echo_worker --systemd outside systemd (no NOTIFY_SOCKET): runs a job as without it") {
    TARRY_REQUIRE_BROKER(url);
    const std::string q = unique_name("systemd-none");
    queue_guard guard(url, q);
    worker_process w(url, q, {"--systemd"});
    REQUIRE_MESSAGE(w.wait_ready(), w.transcript());
    run_one_job_then_stop(w, url, q, "plain");
    CHECK_MESSAGE(w.err_text().find("sd_notify") == std::string::npos, w.err_text());
}

#else

TEST_CASE("echo_worker built without libsystemd: --systemd exits 2 and says why") {
    const auto r = tarry_test::run_process(
        {echo_worker_path(), "--url", "amqp://guest:guest@127.0.0.1:9/%2F", "--queue", "q", "--systemd"}, 30s);
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.err.find("built without libsystemd") != std::string::npos, r.err);
}

#endif
