// Test helpers: run a Python peer (pika, py-amqp) from tests/interop with
// Debian's interpreter, whose modules are the ones installed by
// scripts/install-deps.
#pragma once

#include "env.hpp"
#include "process.hpp"

#include <string>
#include <vector>

namespace tarry_test {

inline const char* python = "/usr/bin/python3";

/// The argv for `python3 <source>/tests/interop/<script> args...`.
inline std::vector<std::string> python_argv(const std::string& script,
                                            const std::vector<std::string>& args) {
    std::vector<std::string> argv{python, source_root() + "/tests/interop/" + script};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

/// Runs the script to completion (at most `timeout`).
inline process_result run_python(const std::string& script, const std::vector<std::string>& args,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
    return run_process(python_argv(script, args), timeout);
}

}  // namespace tarry_test
