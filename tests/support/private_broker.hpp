// Test helpers: a RabbitMQ node of the test's own (scripts/broker), for tests
// that need special settings or that disturb the broker (pausing it,
// restarting it), or a TLS listener (private_broker::with_tls()). Started in
// the constructor, stopped in the destructor — on failure too.
#pragma once

#include "env.hpp"
#include "process.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <sys/types.h>

namespace tarry_test {

class private_broker {
public:
    /// Starts a node in a fresh temporary directory; `extra` goes to
    /// `scripts/broker start` (e.g. {"--consumer-timeout-ms", "5000"}), after
    /// `--rabbitmq TARRY_TEST_RABBITMQ` when that is set.
    explicit private_broker(std::vector<std::string> extra = {}) {
        char tmpl[] = "/tmp/tarry-test-broker.XXXXXX";
        if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
        dir_ = tmpl;
        std::vector<std::string> argv{source_root() + "/scripts/broker", "start", dir_};
        const auto version = rabbitmq_version_args();
        argv.insert(argv.end(), version.begin(), version.end());
        argv.insert(argv.end(), extra.begin(), extra.end());
        auto r = run_process(argv, std::chrono::seconds(120));
        if (r.exit_code != 0) {
            stop();
            throw std::runtime_error("broker did not start (exit " + std::to_string(r.exit_code) +
                                     "): " + r.out + r.err);
        }
        url_ = r.out.substr(0, r.out.find('\n'));
        std::ifstream tls_url(dir_ + "/tls-url");
        if (tls_url && std::getline(tls_url, tls_url_) && !tls_url_.empty()) {
            ca_file_ = dir_ + "/tls/ca.pem";
        } else {
            tls_url_.clear();
        }
    }
    /// A node with a TLS listener as well (`scripts/broker start --tls`):
    /// its own throwaway CA and a certificate for localhost / 127.0.0.1.
    static private_broker with_tls(std::vector<std::string> extra = {}) {
        extra.push_back("--tls");
        return private_broker(std::move(extra));
    }
    ~private_broker() { stop(); }
    private_broker(const private_broker&) = delete;
    private_broker& operator=(const private_broker&) = delete;

    const std::string& url() const noexcept { return url_; }
    const std::string& dir() const noexcept { return dir_; }
    /// With TLS: amqps://guest:guest@localhost:PORT/%2F (no query; append
    /// "?cacertfile=" + ca_file() to verify the broker). Empty without TLS.
    const std::string& tls_url() const noexcept { return tls_url_; }
    /// With TLS: the PEM file of the CA that signed the broker's
    /// certificate. Empty without TLS.
    const std::string& ca_file() const noexcept { return ca_file_; }

    /// The Erlang VM's pid (for SIGSTOP / SIGCONT in dead-peer tests).
    pid_t pid() const {
        std::ifstream f(dir_ + "/pid");
        long pid = 0;
        f >> pid;
        return static_cast<pid_t>(pid);
    }

    /// Stops the node (rabbitmqctl stop, then by its pid) and keeps its
    /// files, for start_again().
    void stop_node() {
        auto r = run_process({source_root() + "/scripts/broker", "stop", dir_}, std::chrono::seconds(60));
        if (r.exit_code != 0) throw std::runtime_error("broker did not stop: " + r.out + r.err);
    }
    /// Starts a node stopped by stop_node() again, on the same port, with its
    /// queues and persistent messages; returns once it is up.
    void start_again() {
        auto r = run_process({source_root() + "/scripts/broker", "start-again", dir_},
                             std::chrono::seconds(120));
        if (r.exit_code != 0)
            throw std::runtime_error("broker did not start again (exit " +
                                     std::to_string(r.exit_code) + "): " + r.out + r.err);
    }

    /// rabbitmqctl against this node only.
    process_result ctl(const std::vector<std::string>& args,
                       std::chrono::milliseconds timeout = std::chrono::seconds(60)) const {
        return broker_ctl(dir_, args, timeout);
    }

    /// rabbitmqctl against the node in `dir` (e.g. TARRY_TEST_BROKER_DIR).
    static process_result broker_ctl(const std::string& dir, const std::vector<std::string>& args,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
        std::vector<std::string> argv{source_root() + "/scripts/broker", "ctl", dir};
        argv.insert(argv.end(), args.begin(), args.end());
        return run_process(argv, timeout);
    }

    /// The pids (as rabbitmqctl prints them) of the connections to the node
    /// in `dir` whose client properties contain `name` (a connection_name,
    /// or part of one). Empty when the listing fails or nothing matches.
    static std::vector<std::string> connection_pids(const std::string& dir, const std::string& name) {
        auto r = broker_ctl(dir, {"list_connections", "pid", "client_properties", "--no-table-headers", "--quiet"});
        std::vector<std::string> pids;
        if (r.exit_code != 0) return pids;
        std::istringstream lines(r.out);
        for (std::string line; std::getline(lines, line);)
            if (line.find(name) != std::string::npos) pids.push_back(line.substr(0, line.find('\t')));
        return pids;
    }

private:
    void stop() {
        if (dir_.empty()) return;
        run_process({source_root() + "/scripts/broker", "stop", dir_}, std::chrono::seconds(60));
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
        dir_.clear();
    }

    std::string dir_;
    std::string url_;
    std::string tls_url_;
    std::string ca_file_;
};

}  // namespace tarry_test
