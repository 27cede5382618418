// Test helpers: run a child process with a bounded wait, capturing its
// output. The child is stopped by its own pid on timeout — never by name.
#pragma once

#include <chrono>
#include <csignal>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tarry_test {

struct process_result {
    int exit_code = -1;      ///< -1 when killed on timeout or by a signal
    bool timed_out = false;
    std::string out;         ///< stdout
    std::string err;         ///< stderr
};

/// A running child with its stdout and stderr captured; wait() collects it.
class child_process {
public:
    explicit child_process(const std::vector<std::string>& argv) {
        int out_pipe[2], err_pipe[2];
        if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
        posix_spawn_file_actions_addclose(&fa, out_pipe[0]);
        posix_spawn_file_actions_addclose(&fa, err_pipe[0]);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        const int rc = posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        close(out_pipe[1]);
        close(err_pipe[1]);
        out_fd_ = out_pipe[0];
        err_fd_ = err_pipe[0];
        if (rc != 0) {
            close(out_fd_);
            close(err_fd_);
            throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
        }
    }
    child_process(const child_process&) = delete;
    child_process& operator=(const child_process&) = delete;
    ~child_process() {
        if (pid_ > 0 && !done_) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        if (out_fd_ >= 0) close(out_fd_);
        if (err_fd_ >= 0) close(err_fd_);
    }

    pid_t pid() const noexcept { return pid_; }

    /// Collects output until the child exits or `timeout` passes (then it
    /// is killed by pid).
    process_result wait(std::chrono::milliseconds timeout) {
        process_result r;
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        bool out_open = true, err_open = true;
        while (out_open || err_open) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                r.timed_out = true;
                break;
            }
            pollfd fds[2] = {{out_open ? out_fd_ : -1, POLLIN, 0}, {err_open ? err_fd_ : -1, POLLIN, 0}};
            if (::poll(fds, 2, static_cast<int>(left.count())) < 0) continue;
            char buf[65536];
            if (out_open && (fds[0].revents & (POLLIN | POLLHUP))) {
                const auto n = ::read(out_fd_, buf, sizeof buf);
                if (n <= 0) out_open = false; else r.out.append(buf, static_cast<std::size_t>(n));
            }
            if (err_open && (fds[1].revents & (POLLIN | POLLHUP))) {
                const auto n = ::read(err_fd_, buf, sizeof buf);
                if (n <= 0) err_open = false; else r.err.append(buf, static_cast<std::size_t>(n));
            }
        }
        if (r.timed_out) ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        done_ = true;
        if (!r.timed_out && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        return r;
    }

private:
    pid_t pid_ = -1;
    int out_fd_ = -1;
    int err_fd_ = -1;
    bool done_ = false;
};

/// Runs argv[0] (a path) with its arguments and waits at most `timeout`.
inline process_result run_process(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
    child_process p(argv);
    return p.wait(timeout);
}

}  // namespace tarry_test
