// The subcommands of `tarry`, one file each (publish_command.cpp, ...), and
// the row each has in the table of tarry.cpp.
//
// A subcommand is given the arguments from its own name on (argv[0] is
// "publish"), prints its usage on stdout for --help and exits 0, exits 2
// with its usage on stderr on bad arguments (cli::args::fail), and returns
// the exit status otherwise: 0 done, 1 failed (said on stderr).
#pragma once

namespace cli {

struct command {
    const char* name;     ///< as typed: `tarry NAME ...`
    const char* summary;  ///< one line for `tarry --help`
    int (*run)(int argc, char** argv);
};

int publish_command(int argc, char** argv);
int job_command(int argc, char** argv);
int schedule_command(int argc, char** argv);
int topology_command(int argc, char** argv);
int delay_command(int argc, char** argv);

}  // namespace cli
