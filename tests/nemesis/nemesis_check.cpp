// nemesis_check: judges a nemesis run afterwards (docs/reliability.md, "The
// nemesis checker"; formats in nemesis_input.hpp, verdicts in
// nemesis_verdicts.hpp).
//
//   nemesis_check [--max-attempts N] [--grace-ms N] [--settle-ms N]
//                 LEDGER FAULTS WORKER_STREAM...
//
// A stream's worker number is the last number in its file name
// (worker-3.jsonl), else its place among the streams (from 1). Prints one
// line per verdict and "checked N jobs, M runs, F faults". Exit 0 when no
// verdict has an unexplained violation, 1 otherwise, 2 on bad arguments or
// input (a malformed line is named by file and line).
#include "nemesis_input.hpp"
#include "nemesis_verdicts.hpp"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace {

const char* const usage =
    "usage: nemesis_check [--max-attempts N] [--grace-ms N] [--settle-ms N] LEDGER FAULTS WORKER_STREAM...\n";

[[noreturn]] void fail(const std::string& why) {
    std::fprintf(stderr, "nemesis_check: %s\n%s", why.c_str(), usage);
    std::exit(2);
}

std::ifstream open(const std::string& path) {
    std::ifstream in(path);
    if (!in) fail("cannot read " + path);
    return in;
}

std::uint64_t count_option(std::string_view name, std::string_view value) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size())
        fail(std::string(name) + " needs a non-negative integer, not '" + std::string(value) + "'");
    return n;
}

}  // namespace

int main(int argc, char** argv) {
    nemesis::options o;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::fputs(usage, stdout);
            return 0;
        }
        if (arg.starts_with("--")) {
            if (i + 1 >= argc) fail(std::string(arg) + " needs a value");
            const std::string_view value = argv[++i];
            if (arg == "--max-attempts") {
                o.max_attempts = static_cast<std::uint32_t>(count_option(arg, value));
                if (o.max_attempts == 0) fail("--max-attempts needs at least 1");
            } else if (arg == "--grace-ms") {
                o.grace = static_cast<nemesis::micros>(count_option(arg, value)) * 1000;
            } else if (arg == "--settle-ms") {
                o.settle = static_cast<nemesis::micros>(count_option(arg, value)) * 1000;
            } else {
                fail("unknown option '" + std::string(arg) + "'");
            }
            continue;
        }
        paths.emplace_back(arg);
    }
    if (paths.size() < 3) fail("needs a ledger, a fault log and at least one worker stream");
    try {
        auto ledger_in = open(paths[0]);
        const auto ledger = nemesis::read_ledger(ledger_in, paths[0]);
        auto faults_in = open(paths[1]);
        const auto faults = nemesis::read_faults(faults_in, paths[1]);
        std::vector<nemesis::worker_stream> streams;
        std::set<unsigned> workers;
        for (std::size_t k = 2; k < paths.size(); ++k) {
            const unsigned worker = nemesis::worker_number(paths[k]).value_or(static_cast<unsigned>(k - 1));
            if (!workers.insert(worker).second) fail("two streams of worker " + std::to_string(worker));
            auto in = open(paths[k]);
            streams.push_back(nemesis::read_worker_stream(in, paths[k], worker));
        }
        const auto report = nemesis::judge(ledger, faults, streams, o);
        std::fputs(report.text().c_str(), stdout);
        return report.exit_code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "nemesis_check: %s\n", e.what());
        return 2;
    }
}
