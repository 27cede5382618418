// An external program the benchmark runs beside itself (a Python consumer,
// a Celery runner), in a process group of its own, with its standard output
// read line by line on a thread of its own as it comes.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace cbench {

class child_program {
public:
    /// Starts argv[0] (a path) with the rest as its arguments; its standard
    /// error stays the benchmark's. Dies when it cannot start.
    explicit child_program(std::vector<std::string> argv);
    /// stop().
    ~child_program();
    child_program(const child_program&) = delete;
    child_program& operator=(const child_program&) = delete;

    /// Waits (at most `t`) for a line starting with `prefix`; the line, or
    /// "" when it did not come or the program ended first.
    std::string wait_for_line(const std::string& prefix, std::chrono::milliseconds t);
    /// The lines printed since the last call (from the first line on the
    /// first call), waiting at most `t` for one when there is none.
    std::vector<std::string> new_lines(std::chrono::milliseconds t);
    /// Whether its standard output has ended (it exited, most likely).
    bool ended();
    /// Sends SIGTERM to the program and waits for it (15 s), then SIGKILL
    /// to its process group; reaps it. Its exit status (-1 if killed or
    /// not started). Idempotent.
    int stop();

private:
    pid_t pid_ = -1;
    int out_fd_ = -1;
    int status_ = -1;
    std::mutex mu_;
    std::condition_variable cv_;
    std::vector<std::string> lines_;
    std::size_t taken_ = 0;
    bool ended_ = false;
    std::thread reader_;
};

}  // namespace cbench
