// Test helpers: run a child process with a bounded wait, capturing its
// output, or keep a long-running child (a worker) and read its stdout line
// by line, signal it and wait for its exit, all with bounded waits. A child
// is only ever signalled or stopped by its own pid — never by name.
#pragma once

#include <algorithm>
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
    std::string out;         ///< stdout (what read_line() did not take)
    std::string err;         ///< stderr
};

/// A running child with its stdout and stderr captured. Either wait() for
/// it (output collected), or read_line() its stdout as it comes, signal()
/// it and wait_exit(). The destructor kills (SIGKILL, by pid) and reaps a
/// child still running.
class child_process {
public:
    explicit child_process(const std::vector<std::string>& argv) {
        int out_pipe[2], err_pipe[2];
        // Close-on-exec: another child started later must not hold these
        // open (dup2 onto 1 and 2 below clears the flag for this child).
        if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
        if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
            close(out_pipe[0]);
            close(out_pipe[1]);
            throw std::runtime_error("pipe failed");
        }
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
        // The child starts with no blocked signals and default dispositions
        // for the ones tests send, whatever this process set up.
        posix_spawnattr_t attr;
        posix_spawnattr_init(&attr);
        sigset_t none, defaults;
        sigemptyset(&none);
        sigemptyset(&defaults);
        sigaddset(&defaults, SIGTERM);
        sigaddset(&defaults, SIGINT);
        sigaddset(&defaults, SIGPIPE);
        posix_spawnattr_setsigmask(&attr, &none);
        posix_spawnattr_setsigdefault(&attr, &defaults);
        posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        std::vector<char*> args;
        for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        const int rc = posix_spawn(&pid_, args[0], &fa, &attr, args.data(), environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
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
    /// is killed by pid). Output already taken by read_line() is not
    /// repeated in `out`.
    process_result wait(std::chrono::milliseconds timeout) {
        // Ends when the child exits (not at end of output: a daemon the
        // child started may keep the pipes open), or on timeout.
        process_result r;
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        bool killed = false;
        while (!reap(false)) {
            drain(50);
            if (std::chrono::steady_clock::now() >= deadline) {
                r.timed_out = true;
                killed = true;
                ::kill(pid_, SIGKILL);
                reap(true);
                break;
            }
        }
        drain(0);
        r.out = std::move(out_);
        r.err = std::move(err_);
        out_.clear();
        err_.clear();
        if (!killed && WIFEXITED(status_)) r.exit_code = WEXITSTATUS(status_);
        return r;
    }

    /// The next line of stdout (without its '\n'), waiting at most
    /// `timeout`; nothing on timeout, or when stdout ended with no line
    /// left (a last line without '\n' is still returned).
    std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            if (auto nl = out_.find('\n'); nl != std::string::npos) {
                std::string line = out_.substr(0, nl);
                out_.erase(0, nl + 1);
                return line;
            }
            if (!out_open_) {
                if (out_.empty()) return std::nullopt;
                std::string line = std::move(out_);
                out_.clear();
                return line;
            }
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) return std::nullopt;
            drain(static_cast<int>(std::min<long long>(left.count(), 50)));
        }
    }

    /// Sends `sig` to the child by its pid; nothing once it was reaped (its
    /// pid may belong to someone else by then).
    void signal(int sig) {
        if (pid_ > 0 && !done_) ::kill(pid_, sig);
    }

    /// Waits at most `timeout` for the child to exit, reading (and keeping)
    /// its output meanwhile: its exit code, 128 + N when signal N ended it,
    /// nothing on timeout (it keeps running).
    std::optional<int> wait_exit(std::chrono::milliseconds timeout) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!reap(false)) {
            if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
            drain(20);
        }
        drain(0);
        if (WIFEXITED(status_)) return WEXITSTATUS(status_);
        if (WIFSIGNALED(status_)) return 128 + WTERMSIG(status_);
        return -1;
    }

    /// Whether the child still runs (not yet reaped).
    bool running() { return !reap(false); }

    /// stderr so far (reads what is ready first).
    const std::string& err_text() {
        drain(0);
        return err_;
    }

private:
    // Reaps the child (blocking when `block`); true once it is reaped.
    bool reap(bool block) {
        if (done_) return true;
        int status = 0;
        if (::waitpid(pid_, &status, block ? 0 : WNOHANG) == pid_) {
            status_ = status;
            done_ = true;
        }
        return done_;
    }

    // Reads what is ready on stdout/stderr, waiting at most `ms` for it.
    void drain(int ms) {
        for (;;) {
            pollfd fds[2] = {{out_open_ ? out_fd_ : -1, POLLIN, 0},
                             {err_open_ ? err_fd_ : -1, POLLIN, 0}};
            if (!out_open_ && !err_open_) {
                if (ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(ms));
                return;
            }
            if (::poll(fds, 2, ms) <= 0) return;
            char buf[65536];
            bool got = false;
            if (out_open_ && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
                const auto n = ::read(out_fd_, buf, sizeof buf);
                if (n <= 0) out_open_ = false; else out_.append(buf, static_cast<std::size_t>(n));
                got = n > 0;
            }
            if (err_open_ && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
                const auto n = ::read(err_fd_, buf, sizeof buf);
                if (n <= 0) err_open_ = false; else err_.append(buf, static_cast<std::size_t>(n));
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
    int status_ = 0;
    std::string out_;  ///< stdout not yet taken
    std::string err_;  ///< stderr so far
};

/// Runs argv[0] (a path) with its arguments and waits at most `timeout`.
inline process_result run_process(const std::vector<std::string>& argv,
                                  std::chrono::milliseconds timeout) {
    child_process p(argv);
    return p.wait(timeout);
}

}  // namespace tarry_test
