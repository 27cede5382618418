// Test helpers: a three-node RabbitMQ cluster of the test's own
// (scripts/cluster), for faults of a node: killed (SIGKILL, by its pid
// file), restarted. Started in the constructor, stopped in the destructor
// (by node name, then pid) — on failure too. The nodes' version comes from
// TARRY_TEST_RABBITMQ (`scripts/cluster start --rabbitmq`; 3.10 when unset).
#pragma once

#include "env.hpp"
#include "process.hpp"

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <stdlib.h>

namespace tarry_test {

class private_cluster {
public:
    private_cluster() {
        char tmpl[] = "/tmp/tarry-test-cluster.XXXXXX";
        if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        std::vector<std::string> start{"start", dir_};
        const auto version = rabbitmq_version_args();
        start.insert(start.end(), version.begin(), version.end());
        auto r = script(std::move(start), std::chrono::seconds(240));
        if (r.exit_code != 0) {
            stop();
            throw std::runtime_error("cluster did not start (exit " + std::to_string(r.exit_code) + "): " + r.out +
                                     r.err);
        }
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);)
            if (line.rfind("amqp://", 0) == 0) urls_.push_back(line);
        if (urls_.size() != 3) throw std::runtime_error("cluster printed no three URLs: " + r.out);
    }
    ~private_cluster() { stop(); }
    private_cluster(const private_cluster&) = delete;
    private_cluster& operator=(const private_cluster&) = delete;

    /// Node n's AMQP URL, n = 1..3.
    const std::string& url(int n) const { return urls_.at(static_cast<std::size_t>(n - 1)); }
    const std::string& dir() const noexcept { return dir_; }

    /// Node n's Erlang VM killed with SIGKILL: no clean shutdown.
    void kill(int n) { must({"kill", dir_, std::to_string(n)}, "kill"); }
    /// Node n started again with its own files; returns once it runs.
    void restart(int n) { must({"restart", dir_, std::to_string(n)}, "restart"); }
    /// rabbitmqctl `args` run against node n; what it printed (empty on a failure).
    std::string ctl(int n, std::vector<std::string> args) {
        args.insert(args.begin(), {"ctl", dir_, std::to_string(n)});
        auto r = script(std::move(args), std::chrono::seconds(60));
        return r.exit_code == 0 ? r.out : std::string();
    }
    /// The node (1..3) leading quorum queue `queue`.
    int leader(const std::string& queue) {
        const auto r = must({"leader", dir_, queue}, "leader");
        return std::stoi(r.out);
    }

private:
    static process_result script(std::vector<std::string> args, std::chrono::milliseconds timeout) {
        args.insert(args.begin(), source_root() + "/scripts/cluster");
        return run_process(args, timeout);
    }
    process_result must(std::vector<std::string> args, const char* what) {
        auto r = script(std::move(args), std::chrono::seconds(120));
        if (r.exit_code != 0)
            throw std::runtime_error(std::string("cluster ") + what + " failed: " + r.out + r.err);
        return r;
    }
    void stop() {
        if (dir_.empty()) return;
        script({"stop", dir_}, std::chrono::seconds(120));
        run_process({"/bin/rm", "-rf", dir_}, std::chrono::seconds(60));
        dir_.clear();
    }

    std::string dir_;
    std::vector<std::string> urls_;
};

}  // namespace tarry_test
