// echo_worker processes on one queue (see echo_worker_fleet.hpp).
#include "echo_worker_fleet.hpp"

#include "cleanup_on_signal.hpp"
#include "json_line.hpp"
#include "process.hpp"

#include <atomic>
#include <csignal>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace cbench {

using namespace std::chrono_literals;
using steady = std::chrono::steady_clock;

struct echo_worker_fleet::worker {
    explicit worker(const std::vector<std::string>& argv) : p(argv) {}

    tarry_test::child_process p;
    std::mutex life;                   ///< p.signal() against p.running(): not after the reap
    std::vector<std::string> lines;    ///< the reader's until it is joined
    std::atomic<std::size_t> ready{0};
    std::atomic<std::size_t> succeeded{0};
    std::atomic<bool> ended{false};    ///< the worker exited and its output was read
    std::thread reader;

    void take(std::string line) {
        const std::string_view l(line);
        if (l.starts_with(R"({"event":"succeeded")")) ++succeeded;
        else if (l.starts_with(R"({"event":"ready")")) ++ready;
        lines.push_back(std::move(line));
    }
    void read_all() {
        for (;;) {
            if (auto line = p.read_line(200ms)) {
                take(std::move(*line));
                continue;
            }
            bool gone = false;
            {
                std::lock_guard lock(life);
                gone = !p.running();
            }
            if (gone) {
                while (auto line = p.read_line(1s)) take(std::move(*line));  // what is left, up to EOF
                ended = true;
                return;
            }
        }
    }
    void signal(int sig) {
        std::lock_guard lock(life);
        p.signal(sig);
    }
};

echo_worker_fleet::echo_worker_fleet(const std::string& program, const std::vector<std::string>& node_urls,
                                     const std::string& queue, std::size_t n,
                                     const std::vector<std::string>& extra) {
    cleanup_key_ = on_signal::add([this] { kill_all(); });
    try {
        for (std::size_t i = 0; i < n; ++i) {
            std::vector<std::string> argv{program};
            for (std::size_t k = 0; k < node_urls.size(); ++k) {
                argv.push_back("--url");
                argv.push_back(node_urls[(i + k) % node_urls.size()]);
            }
            argv.insert(argv.end(), {"--queue", queue});
            argv.insert(argv.end(), extra.begin(), extra.end());
            auto& w = *workers_.emplace_back(std::make_unique<worker>(argv));
            w.reader = std::thread([&w] { w.read_all(); });
        }
    } catch (...) {
        kill_all();
        join_readers();
        on_signal::forget(cleanup_key_);
        throw;
    }
}

echo_worker_fleet::~echo_worker_fleet() {
    on_signal::forget(cleanup_key_);
    kill_all();
    join_readers();
}

void echo_worker_fleet::kill_all() {
    for (auto& w : workers_) w->signal(SIGKILL);
}

void echo_worker_fleet::join_readers() {
    for (auto& w : workers_)
        if (w->reader.joinable()) w->reader.join();
}

namespace {

template <class Pred>
bool poll_until(Pred pred, std::chrono::milliseconds t) {
    const auto deadline = steady::now() + t;
    while (!pred()) {
        if (steady::now() >= deadline) return false;
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

}  // namespace

bool echo_worker_fleet::wait_ready(std::chrono::milliseconds t) {
    return poll_until([&] {
        for (auto& w : workers_)
            if (w->ready == 0) return false;
        return true;
    }, t);
}

bool echo_worker_fleet::wait_succeeded(std::size_t n, std::chrono::milliseconds t) {
    return poll_until([&] {
        std::size_t done = 0;
        for (auto& w : workers_) done += w->succeeded;
        return done >= n;
    }, t);
}

bool echo_worker_fleet::stop(std::chrono::milliseconds t) {
    for (auto& w : workers_) w->signal(SIGTERM);
    const bool exited = poll_until([&] {
        for (auto& w : workers_)
            if (!w->ended) return false;
        return true;
    }, t);
    if (!exited) kill_all();
    join_readers();
    bool all_zero = exited;
    for (auto& w : workers_) all_zero = w->p.wait_exit(1s) == 0 && all_zero;
    return all_zero;
}

std::vector<worker_event> echo_worker_fleet::events() const {
    std::vector<worker_event> out;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
        for (const auto& line : workers_[i]->lines) {
            const auto f = json_line::parse(line);
            if (!f) continue;
            const auto text = [&](const char* name) {
                const auto it = f->find(name);
                return it == f->end() ? std::string() : it->second;
            };
            const auto micros = [&](const char* name) {
                return json_line::epoch_micros(text(name)).value_or(-1);
            };
            out.push_back({text("event"), text("id"), micros("due"), micros("at"), i});
        }
    }
    return out;
}

std::string echo_worker_fleet::stderr_text() {
    std::string s;
    for (std::size_t i = 0; i < workers_.size(); ++i)
        s += "worker " + std::to_string(i) + ": " + workers_[i]->p.err_text() + "\n";
    return s;
}

}  // namespace cbench
