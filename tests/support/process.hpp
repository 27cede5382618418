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
        // Ends when the child exits (not at end of output: a daemon the
        // child started may keep the pipes open), or on timeout.
        process_result r;
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        int status = 0;
        bool exited = false;
        for (;;) {
            drain(r, 50);
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                exited = true;
                drain(r, 0);
                break;
            }
            if (std::chrono::steady_clock::now() >= deadline) {
                r.timed_out = true;
                ::kill(pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                break;
            }
        }
        done_ = true;
        if (exited && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
        return r;
    }

private:
    // Reads what is ready on stdout/stderr, waiting at most `ms` for it.
    void drain(process_result& r, int ms) {
        for (;;) {
            pollfd fds[2] = {{out_open_ ? out_fd_ : -1, POLLIN, 0},
                             {err_open_ ? err_fd_ : -1, POLLIN, 0}};
            if (!out_open_ && !err_open_) return;
            if (::poll(fds, 2, ms) <= 0) return;
            char buf[65536];
            bool got = false;
            if (out_open_ && (fds[0].revents & (POLLIN | POLLHUP))) {
                const auto n = ::read(out_fd_, buf, sizeof buf);
                if (n <= 0) out_open_ = false; else r.out.append(buf, static_cast<std::size_t>(n));
                got = n > 0;
            }
            if (err_open_ && (fds[1].revents & (POLLIN | POLLHUP))) {
                const auto n = ::read(err_fd_, buf, sizeof buf);
                if (n <= 0) err_open_ = false; else r.err.append(buf, static_cast<std::size_t>(n));
                got = got || n > 0;
            }
            if (!got) return;
            ms = 0;
        }
    }

    bool out_open_ = true;
    bool err_open_ = true;
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
