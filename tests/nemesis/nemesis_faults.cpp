// The nemesis's faults (see nemesis_faults.hpp).
#include "nemesis_faults.hpp"

#include "nemesis_input.hpp"

#include <cstdio>
#include <sstream>

namespace nemesis {

namespace {

using ms = std::chrono::milliseconds;

micros now_micros() { return to_micros(std::chrono::system_clock::now()); }

std::string seconds_text(ms t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(t.count()) / 1000.0);
    return buf;
}

}  // namespace

fault_injector::fault_injector(tarry_test::private_cluster& cluster, worker_fleet& fleet, nemesis_options o,
                               const std::string& faults_path)
    : cluster_(cluster), fleet_(fleet), o_(std::move(o)), rng_(o_.seed), worker_busy_(fleet.size(), false) {
    log_.open(faults_path, std::ios::app);
    if (!log_) throw std::runtime_error("cannot write " + faults_path);
}

fault_injector::~fault_injector() { stop(); }

void fault_injector::start() {
    loop_ = std::thread([this] { loop(); });
}

void fault_injector::stop() {
    {
        std::lock_guard lock(m_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (loop_.joinable()) loop_.join();
    for (auto& t : faults_)
        if (t.joinable()) t.join();
    faults_.clear();
}

std::map<std::string, unsigned> fault_injector::counts() const {
    std::lock_guard lock(m_);
    return counts_;
}

unsigned fault_injector::failures() const {
    std::lock_guard lock(m_);
    return failures_;
}

void fault_injector::say(const std::string& line) const {
    if (o_.say) o_.say("nemesis: " + line);
}

bool fault_injector::wait_or_stop(ms t) {
    std::unique_lock lock(m_);
    return cv_.wait_for(lock, t, [&] { return stopping_; });
}

void fault_injector::loop() {
    for (;;) {
        ms gap;
        {
            std::lock_guard lock(m_);
            gap = ms(std::uniform_int_distribution<std::int64_t>(o_.min_gap.count(), o_.max_gap.count())(rng_));
        }
        if (wait_or_stop(gap)) return;
        plan p;
        if (pick(p)) faults_.emplace_back([this, p] { run(p); });
    }
}

bool fault_injector::pick(plan& p) {
    std::lock_guard lock(m_);
    auto between = [&](std::int64_t a, std::int64_t b) { return std::uniform_int_distribution<std::int64_t>(a, b)(rng_); };
    std::vector<fault_kind> worker_kinds{fault_kind::worker_kill, fault_kind::connection_cut};
    if (!o_.clock_files.empty()) worker_kinds.push_back(fault_kind::clock_step);
    std::vector<fault_kind> kinds = worker_kinds;
    kinds.insert(kinds.end(), {fault_kind::node_kill, fault_kind::partition, fault_kind::pause});
    p.what = kinds[static_cast<std::size_t>(between(0, static_cast<std::int64_t>(kinds.size()) - 1))];
    if (!targets_worker(p.what) && node_busy_)
        p.what = worker_kinds[static_cast<std::size_t>(between(0, static_cast<std::int64_t>(worker_kinds.size()) - 1))];
    if (targets_worker(p.what)) {
        std::vector<unsigned> free;
        for (unsigned n = 1; n <= worker_busy_.size(); ++n)
            if (!worker_busy_[n - 1]) free.push_back(n);
        if (free.empty()) return false;
        p.target = free[static_cast<std::size_t>(between(0, static_cast<std::int64_t>(free.size()) - 1))];
        worker_busy_[p.target - 1] = true;
    } else {
        p.target = static_cast<unsigned>(between(1, 3));
        node_busy_ = true;
        faulted_node_ = p.target;
    }
    switch (p.what) {
        case fault_kind::worker_kill: p.hold = ms(between(500, 10'000)); break;
        case fault_kind::node_kill: p.hold = ms(between(5'000, 20'000)); break;
        case fault_kind::partition:
            p.hold = ms(between(3'000, 40'000));
            p.clients = between(0, 1) == 1;
            break;
        case fault_kind::pause: p.hold = ms(between(3'000, 40'000)); break;
        case fault_kind::connection_cut: p.hold = ms(0); break;
        case fault_kind::clock_step:
            p.hold = ms(between(10'000, 40'000));
            p.step_s = static_cast<int>(between(2, 8)) * (between(0, 1) == 1 ? 1 : -1);
            break;
    }
    return true;
}

unsigned fault_injector::cut_connections(unsigned n, unsigned via_node) {
    // Tab-separated: the connection's pid, its client properties, where
    // connection_name shows as {"connection_name","nemesis-worker-N"} (and
    // "nemesis-worker-N (copies)" for its connection for copies).
    const std::string listed = cluster_.ctl(static_cast<int>(via_node),
                                            {"list_connections", "-q", "--no-table-headers", "pid", "client_properties"});
    const std::string name = "nemesis-worker-" + std::to_string(n);
    const auto names_it = [&](const std::string& line) {
        for (auto at = line.find(name); at != std::string::npos; at = line.find(name, at + 1)) {
            const auto after = line.substr(at + name.size(), 2);
            if (after.starts_with("\"") || after == " (") return true;
        }
        return false;
    };
    unsigned cut = 0;
    std::istringstream lines(listed);
    for (std::string line; std::getline(lines, line);) {
        if (!names_it(line)) continue;
        const std::string pid = line.substr(0, line.find('\t'));
        if (pid.empty() || pid.front() != '<') continue;
        cluster_.ctl(static_cast<int>(via_node), {"close_connection", pid, "nemesis: connection cut"});
        ++cut;
    }
    return cut;
}

bool fault_injector::cut_then(unsigned n, micros t) const {
    std::lock_guard lock(m_);
    for (const auto& c : cuts_)
        if (c.worker == n && c.start <= t && t <= c.end + 2'000'000) return true;
    return false;
}

void fault_injector::write_clock(unsigned n, int step_s) {
    // Written aside, then renamed: libfaketime never reads half a file.
    const std::string& path = o_.clock_files.at(n - 1);
    {
        std::ofstream f(path + ".new", std::ios::trunc);
        f << (step_s < 0 ? "" : "+") << step_s << '\n';
        if (!f) throw std::runtime_error("cannot write " + path + ".new");
    }
    if (std::rename((path + ".new").c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename to " + path);
}

void fault_injector::run(plan p) {
    fault f;
    f.kind = p.what;
    f.target = p.target;
    const bool on_worker = targets_worker(p.what);
    std::string what = std::string(to_string(p.what)) + (on_worker ? " of worker " : " of node ") + std::to_string(p.target);
    if (p.clients) what += " (--clients)";
    if (p.what == fault_kind::clock_step) what += " by " + std::string(p.step_s > 0 ? "+" : "") + std::to_string(p.step_s) + " s";
    const auto failed = [&](const char* step, const std::exception& e) {
        say(what + ": " + step + " failed: " + e.what());
        std::lock_guard lock(m_);
        ++failures_;
    };

    f.start = now_micros();
    bool logged = true;
    try {
        switch (p.what) {
            case fault_kind::worker_kill: fleet_.kill(p.target); break;
            case fault_kind::node_kill: cluster_.kill(static_cast<int>(p.target)); break;
            case fault_kind::partition: cluster_.partition(static_cast<int>(p.target), p.clients); break;
            case fault_kind::pause: cluster_.pause(static_cast<int>(p.target)); break;
            case fault_kind::connection_cut: {
                unsigned via;
                {
                    std::lock_guard lock(m_);
                    via = node_busy_ && faulted_node_ == 1 ? 2 : 1;
                }
                const unsigned cut = cut_connections(p.target, via);
                if (cut == 0) {
                    say(what + ": no connection of it found (through node " + std::to_string(via) + "), not logged");
                    logged = false;
                } else {
                    what += " (" + std::to_string(cut) + " connection" + (cut > 1 ? "s" : "") + ")";
                }
                break;
            }
            case fault_kind::clock_step:
                write_clock(p.target, p.step_s);
                f.step = static_cast<micros>(p.step_s) * 1'000'000;
                break;
        }
    } catch (const std::exception& e) {
        failed("start", e);
    }
    if (logged) say("start " + what + (p.hold.count() > 0 ? ", healed in " + seconds_text(p.hold) : std::string()));
    wait_or_stop(p.hold);
    for (int attempt = 1; attempt <= 5; ++attempt) {
        try {
            switch (p.what) {
                case fault_kind::worker_kill: fleet_.restart(p.target); break;
                case fault_kind::node_kill: cluster_.restart(static_cast<int>(p.target)); break;
                case fault_kind::partition: cluster_.heal(); break;
                case fault_kind::pause: cluster_.resume(static_cast<int>(p.target)); break;
                case fault_kind::connection_cut: break;
                case fault_kind::clock_step: write_clock(p.target, 0); break;
            }
            break;
        } catch (const std::exception& e) {
            failed("heal", e);
            std::this_thread::sleep_for(std::chrono::seconds(2));
        }
    }
    f.end = now_micros();
    if (logged && p.hold.count() > 0)
        say("healed " + what + " after " + seconds_text(ms((f.end - f.start) / 1000)));
    {
        std::lock_guard lock(m_);
        if (on_worker) worker_busy_[p.target - 1] = false;
        else node_busy_ = false;
        if (p.what == fault_kind::connection_cut) cuts_.push_back({p.target, f.start, f.end});
    }
    if (!logged) return;

    // consumed=: a worker fault's worker consuming again (none for a clock
    // step: its connection stays); for a node's, each worker that lost its
    // connection from the start to 5 s after the heal (but not to a cut of
    // its connection), consuming again after that. Waited for up to 60 s
    // after the heal (at least 30 s for a node's: its workers may notice
    // late).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    const auto settled = std::chrono::steady_clock::now() + std::chrono::seconds(on_worker ? 0 : 30);
    for (;;) {
        f.consumed_again.clear();
        bool waiting = false;
        if (p.what == fault_kind::worker_kill || p.what == fault_kind::connection_cut) {
            if (auto t = fleet_.consuming_after(p.target, f.start)) f.consumed_again.push_back(*t);
            else waiting = true;
        } else if (!on_worker) {
            for (unsigned n = 1; n <= fleet_.size(); ++n) {
                const auto lost = fleet_.lost_within(n, f.start, f.end + 5'000'000);
                if (!lost || cut_then(n, *lost)) continue;
                if (auto t = fleet_.consuming_after(n, *lost)) f.consumed_again.push_back(*t);
                else waiting = true;
            }
            waiting = waiting || std::chrono::steady_clock::now() < settled;
        }
        if (!waiting || std::chrono::steady_clock::now() >= deadline) break;
        std::this_thread::sleep_for(ms(200));
    }
    std::ostringstream line;
    line << f.start << ' ' << f.end << ' ' << to_string(f.kind) << ' ' << f.target;
    for (const auto t : f.consumed_again) line << " consumed=" << t;
    if (f.step) line << " step-ms=" << *f.step / 1000;
    std::lock_guard lock(m_);
    log_ << line.str() << '\n';
    log_.flush();
    ++counts_[to_string(f.kind)];
}

}  // namespace nemesis
