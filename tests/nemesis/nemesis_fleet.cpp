// The nemesis run's workers (see nemesis_fleet.hpp).
#include "nemesis_fleet.hpp"

#include "json_line.hpp"

#include <algorithm>
#include <csignal>
#include <stdexcept>

namespace nemesis {

namespace {

std::int64_t now_micros() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// How echo_worker's hooks say it (samples/echo_worker.cpp, connection_event::text).
constexpr std::string_view consuming_line = "echo_worker: connection consuming";
constexpr std::string_view lost_line = "echo_worker: connection lost";

}  // namespace

worker_fleet::worker_fleet(std::vector<std::vector<std::string>> argvs, const std::string& dir) {
    for (std::size_t i = 0; i < argvs.size(); ++i) {
        auto s = std::make_unique<slot>();
        s->argv = std::move(argvs[i]);
        const std::string base = dir + "/worker-" + std::to_string(i + 1);
        s->out.open(base + ".jsonl", std::ios::app);
        s->err.open(base + ".err", std::ios::app);
        if (!s->out || !s->err) throw std::runtime_error("cannot write " + base + ".jsonl / .err");
        slots_.push_back(std::move(s));
    }
}

worker_fleet::~worker_fleet() {
    pumping_ = false;
    if (pump_.joinable()) pump_.join();
    // Children still running are killed by child_process's destructor.
}

void worker_fleet::start() {
    for (unsigned n = 1; n <= size(); ++n) restart(n);
    pumping_ = true;
    pump_ = std::thread([this] { pump_loop(); });
}

bool worker_fleet::wait_consuming(std::chrono::milliseconds t) const {
    const auto until = std::chrono::steady_clock::now() + t;
    for (;;) {
        bool all = true;
        for (const auto& s : slots_) {
            std::lock_guard lock(s->m);
            all = all && !s->consuming.empty();
        }
        if (all) return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
}

void worker_fleet::kill(unsigned n) {
    auto& s = *slots_.at(n - 1);
    std::lock_guard lock(s.m);
    if (!s.p) return;
    s.p->signal(SIGKILL);
    s.p->wait_exit(std::chrono::seconds(10));
    pump_locked(s, true);
    s.p.reset();
}

void worker_fleet::restart(unsigned n) {
    auto& s = *slots_.at(n - 1);
    std::lock_guard lock(s.m);
    if (s.p) return;
    s.p = std::make_unique<tarry_test::child_process>(s.argv);
    s.err_taken = 0;
    ++lives_;
}

std::optional<std::int64_t> worker_fleet::consuming_after(unsigned n, std::int64_t since) const {
    const auto& s = *slots_.at(n - 1);
    std::lock_guard lock(s.m);
    for (const auto t : s.consuming)
        if (t > since) return t;
    return std::nullopt;
}

std::optional<std::int64_t> worker_fleet::lost_within(unsigned n, std::int64_t from, std::int64_t to) const {
    const auto& s = *slots_.at(n - 1);
    std::lock_guard lock(s.m);
    for (const auto t : s.lost)
        if (t >= from && t <= to) return t;
    return std::nullopt;
}

std::size_t worker_fleet::not_ended(const std::vector<std::string>& ids) const {
    std::lock_guard lock(ended_mutex_);
    return static_cast<std::size_t>(
        std::count_if(ids.begin(), ids.end(), [&](const std::string& id) { return ended_.count(id) == 0; }));
}

std::vector<std::optional<int>> worker_fleet::stop(std::chrono::milliseconds grace) {
    for (auto& s : slots_) {
        std::lock_guard lock(s->m);
        if (s->p) s->p->signal(SIGTERM);
    }
    // Each worker's output is read while it shuts down (a full pipe would
    // block it), by the pump, until it exits.
    std::vector<std::optional<int>> codes(slots_.size());
    const auto until = std::chrono::steady_clock::now() + grace;
    for (std::size_t i = 0; i < slots_.size(); ++i) {
        auto& s = *slots_[i];
        for (;;) {
            {
                std::lock_guard lock(s.m);
                if (!s.p) break;
                if (auto code = s.p->wait_exit(std::chrono::milliseconds(20))) {
                    codes[i] = code;
                    pump_locked(s, true);
                    s.p.reset();
                    break;
                }
                if (std::chrono::steady_clock::now() >= until) {
                    s.p->signal(SIGKILL);
                    s.p->wait_exit(std::chrono::seconds(10));
                    pump_locked(s, true);
                    s.p.reset();
                    break;
                }
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    pumping_ = false;
    if (pump_.joinable()) pump_.join();
    for (auto& s : slots_) {
        s->out.close();
        s->err.close();
    }
    return codes;
}

void worker_fleet::pump_loop() {
    while (pumping_) {
        for (auto& s : slots_) {
            std::lock_guard lock(s->m);
            if (s->p) pump_locked(*s, false);
        }
        // read_line's own waits (1 ms a worker) pace the loop.
    }
}

void worker_fleet::pump_locked(slot& s, bool to_the_end) {
    // stdout: at most so many lines a pass, so that one busy worker does not
    // keep the pump from the others.
    for (int k = 0; to_the_end || k < 2000; ++k) {
        auto line = s.p->read_line(std::chrono::milliseconds(1));
        if (!line) break;
        take_line(s, *line);
    }
    s.out.flush();
    // stderr: whole lines only.
    const std::string& err = s.p->err_text();
    bool wrote = false;
    for (;;) {
        const auto nl = err.find('\n', s.err_taken);
        if (nl == std::string::npos) break;
        const std::string_view line(err.data() + s.err_taken, nl - s.err_taken);
        if (line == consuming_line) s.consuming.push_back(now_micros());
        if (line.starts_with(lost_line)) s.lost.push_back(now_micros());
        s.err << now_micros() << ' ' << line << '\n';
        s.err_taken = nl + 1;
        wrote = true;
    }
    if (to_the_end && s.err_taken < err.size()) {
        s.err << now_micros() << ' ' << std::string_view(err).substr(s.err_taken) << '\n';
        s.err_taken = err.size();
        wrote = true;
    }
    if (wrote) s.err.flush();
}

void worker_fleet::take_line(slot& s, const std::string& line) {
    // A line cut short by a kill is written as it is: the checker skips it.
    s.out << line << '\n';
    const auto f = json_line::parse(line);
    if (!f) return;
    const auto event = f->find("event");
    if (event == f->end()) return;
    if (event->second == "run") ++runs_;
    if (event->second == "succeeded" || event->second == "dead") {
        const auto id = f->find("id");
        if (id == f->end()) return;
        std::lock_guard lock(ended_mutex_);
        ended_.insert(id->second);
    }
}

}  // namespace nemesis
