// The podnet command line: subcommands list, design, run, resolve.
#pragma once

namespace podnet::cli {

// Runs podnet with the given arguments; returns the process exit status
// (0 ok, 1 failure, 2 bad input or usage).
int run(int argc, char** argv);

}  // namespace podnet::cli
