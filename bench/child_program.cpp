// An external program beside the benchmark (see child_program.hpp).
#include "child_program.hpp"

#include "consumer_bench_support.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace cbench {

child_program::child_program(std::vector<std::string> argv) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) die("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, args[0], &actions, &attr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(fds[1]);
    if (rc != 0) {
        ::close(fds[0]);
        pid_ = -1;
        die("cannot start " + argv[0]);
    }
    out_fd_ = fds[0];
    reader_ = std::thread([this] {
        FILE* in = ::fdopen(out_fd_, "r");
        char buf[4096];
        std::string partial;
        while (in && std::fgets(buf, sizeof buf, in)) {
            partial += buf;
            if (partial.back() != '\n') continue;
            partial.pop_back();
            std::lock_guard lock(mu_);
            lines_.push_back(std::move(partial));
            partial.clear();
            cv_.notify_all();
        }
        if (in) std::fclose(in);
        std::lock_guard lock(mu_);
        ended_ = true;
        cv_.notify_all();
    });
}

child_program::~child_program() { stop(); }

std::string child_program::wait_for_line(const std::string& prefix, std::chrono::milliseconds t) {
    std::unique_lock lock(mu_);
    std::size_t looked = 0;
    std::string found;
    cv_.wait_for(lock, t, [&] {
        for (; looked < lines_.size(); ++looked)
            if (lines_[looked].compare(0, prefix.size(), prefix) == 0) {
                found = lines_[looked];
                return true;
            }
        return ended_;
    });
    return found;
}

std::vector<std::string> child_program::new_lines(std::chrono::milliseconds t) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, t, [&] { return taken_ < lines_.size() || ended_; });
    std::vector<std::string> out(lines_.begin() + static_cast<long>(taken_), lines_.end());
    taken_ = lines_.size();
    return out;
}

bool child_program::ended() {
    std::lock_guard lock(mu_);
    return ended_;
}

int child_program::stop() {
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        int status = 0;
        pid_t done = 0;
        for (int i = 0; i < 150 && done == 0; ++i) {
            done = ::waitpid(pid_, &status, WNOHANG);
            if (done == 0) std::this_thread::sleep_for(100ms);
        }
        // Whatever is left in its group (it started it): killed.
        ::kill(-pid_, SIGKILL);
        if (done == 0) done = ::waitpid(pid_, &status, 0);
        status_ = done == pid_ && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        pid_ = -1;
    }
    if (reader_.joinable()) reader_.join();
    return status_;
}

}  // namespace cbench
