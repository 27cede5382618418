// The `tarry` tool of the build under test, run as a child process: for the
// tests of its commands.
#pragma once

#include "process.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace amqp_it {

inline std::string tarry_path() { return tarry_test::env("TARRY_BUILD_ROOT").value_or(".") + "/tools/tarry"; }

/// Runs `tarry ARGS...` and waits for it (at most 30 s).
inline tarry_test::process_result run_tarry(std::vector<std::string> args) {
    args.insert(args.begin(), tarry_path());
    return tarry_test::run_process(args, std::chrono::seconds(30));
}

}  // namespace amqp_it
