// tarry: the command-line tool. Its command line is a public interface:
//
//   tarry COMMAND [OPTIONS]       (tarry COMMAND --help: that command's options)
//   tarry --help | --version
//
// Each command is a file of its own (commands.hpp) and a row of the table
// below. Exit status: 0 done, 1 failed (the broker refused, was unreachable
// or did not confirm; said on stderr), 2 bad arguments (the reason and the
// usage on stderr). --version prints `tarry VERSION`, the project's version.
#include "commands.hpp"
#include "tarry_version.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// The commands, in the order --help lists them.
constexpr cli::command commands[] = {
    {"publish", "publish one job and wait for the broker's confirm", cli::publish_command},
    {"job", "cancel or reschedule a job by its id (tarry job --help)", cli::job_command},
    {"schedule", "add, list or remove periodic jobs (tarry schedule --help)", cli::schedule_command},
    {"topology", "declare or export the broker-side delay cascade (tarry topology --help)", cli::topology_command},
    {"delay", "deliver one message to any exchange after a delay, through the cascade", cli::delay_command},
};

void print_usage(std::FILE* to) {
    std::fputs("usage: tarry COMMAND [OPTIONS]   (tarry COMMAND --help: its options)\n"
               "       tarry --help | --version\n"
               "commands:\n",
               to);
    for (const auto& c : commands) std::fprintf(to, "  %-9s %s\n", c.name, c.summary);
    std::fputs("exit status: 0 done, 1 failed (the broker refused, was unreachable or did not\n"
               "confirm), 2 bad arguments\n",
               to);
}

[[noreturn]] void usage_error(const std::string& why) {
    std::fprintf(stderr, "tarry: %s\n", why.c_str());
    print_usage(stderr);
    std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) usage_error("no command given");
    const std::string name = argv[1];
    if (name == "--help" || name == "-h") {
        print_usage(stdout);
        return 0;
    }
    if (name == "--version") {
        std::printf("tarry %s\n", TARRY_VERSION);
        return 0;
    }
    for (const auto& c : commands)
        if (name == c.name) return c.run(argc - 1, argv + 1);
    usage_error((name.rfind('-', 0) == 0 ? "unknown option '" : "unknown command '") + name + "'");
}
