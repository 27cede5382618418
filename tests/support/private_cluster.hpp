// Test helpers: a three-node RabbitMQ cluster of the test's own
// (scripts/cluster), for faults of a node: killed (SIGKILL, by its pid
// file), restarted, paused (SIGSTOP) and resumed; with `netns` (each node in
// a network namespace of its own, `scripts/cluster start --netns`; needs
// root) also cut off from the others, or from the clients too, and healed.
// Started in the constructor, stopped in the destructor (by node name, then
// pid; a netns cluster's namespaces, links and bridge removed) — on failure
// too. The nodes' version comes from TARRY_TEST_RABBITMQ (`scripts/cluster
// start --rabbitmq`; 3.10 when unset).
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

/// How a private_cluster starts: scripts/cluster start's options.
struct cluster_options {
    /// Each node in a network namespace of its own (`--netns`: URLs on a
    /// private /24, net_ticktime 10); partition() and heal() need it.
    bool netns = false;
    /// `--partition-handling` with netns: "pause_minority" or "autoheal";
    /// empty: the script's default, pause_minority.
    std::string partition_handling;
};

class private_cluster {
public:
    /// Three nodes on loopback.
    private_cluster() : private_cluster(cluster_options{}) {}
    /// Three nodes started as `options` says.
    explicit private_cluster(const cluster_options& options) {
        char tmpl[] = "/tmp/tarry-test-cluster.XXXXXX";
        if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        std::vector<std::string> start{"start", dir_};
        const auto version = rabbitmq_version_args();
        start.insert(start.end(), version.begin(), version.end());
        if (options.netns) start.push_back("--netns");
        if (!options.partition_handling.empty())
            start.insert(start.end(), {"--partition-handling", options.partition_handling});
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
    /// Node n cut off from the other two nodes, both ways (and with `clients`
    /// from the host's clients too: a new connection fails); netns only.
    void partition(int n, bool clients = false) {
        std::vector<std::string> args{"partition", dir_, std::to_string(n)};
        if (clients) args.push_back("--clients");
        must(std::move(args), "partition");
    }
    /// Every cut of partition() undone (the nodes reconnect on their own).
    void heal() { must({"heal", dir_}, "heal"); }
    /// Node n's Erlang VM stopped (SIGSTOP): it answers no one until resume(n).
    void pause(int n) { must({"pause", dir_, std::to_string(n)}, "pause"); }
    /// Node n's Erlang VM running again (SIGCONT).
    void resume(int n) { must({"resume", dir_, std::to_string(n)}, "resume"); }
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
