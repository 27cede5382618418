// /metrics as Prometheus' own checker sees it: a realistic snapshot through
// `promtool check metrics`, which must print nothing (no parse error, no
// lint finding). Skipped, and counted as such, when promtool is not on the
// PATH.
#include "env.hpp"
#include "http_test_support.hpp"
#include "metrics_text.hpp"
#include "process.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;

std::optional<fs::path> on_path(std::string_view program) {
    const auto path = tarry_test::env("PATH");
    if (!path) return std::nullopt;
    std::istringstream dirs(*path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
        if (dir.empty()) continue;
        const fs::path candidate = fs::path(dir) / program;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return std::nullopt;
}

// promtool, or a skip counted and said (the case then returns).
std::optional<fs::path> promtool_or_skip() {
    auto promtool = on_path("promtool");
    if (!promtool) {
        MESSAGE("SKIPPED: promtool is not on the PATH (Debian: apt-get install prometheus)");
        ++tarry_test::runtime_skips();
    }
    return promtool;
}

// promtool's output (stdout and stderr) for `text`; its exit code in `code`.
std::string promtool_check(const fs::path& promtool, const std::string& text, int& code) {
    const fs::path file = fs::temp_directory_path() / ("tarry-metrics-" + std::to_string(::getpid()) + ".txt");
    std::ofstream(file, std::ios::binary) << text;
    const auto r = tarry_test::run_process(
        {"/bin/sh", "-c", "exec \"$0\" check metrics < \"$1\"", promtool.string(), file.string()},
        std::chrono::seconds(60));
    fs::remove(file);
    code = r.exit_code;
    return r.out + r.err;
}

}  // namespace

TEST_CASE("promtool check metrics finds nothing in /metrics") {
    const auto promtool = promtool_or_skip();
    if (!promtool) return;
    for (const bool idle : {false, true}) {
        CAPTURE(idle);
        const std::string text = idle ? tarry::http_detail::metrics_text(tarry::consumer_metrics{}, "jobs")
                                      : tarry::http_detail::metrics_text(http_test::busy_consumer(), "orders \"eu\"");
        int code = -1;
        const std::string output = promtool_check(*promtool, text, code);
        CHECK_MESSAGE(output.empty(), output);
        CHECK(code == 0);
    }
}

TEST_CASE("promtool check metrics reports a broken exposition (the check can fail)") {
    const auto promtool = promtool_or_skip();
    if (!promtool) return;
    int code = -1;
    const std::string output =
        promtool_check(*promtool, "# TYPE jobs_done counter\njobs_done{queue=\"q\"} 1\n", code);
    CHECK_FALSE(output.empty());
}
