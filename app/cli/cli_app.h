#pragma once
namespace ts::cli {
// Parses the command line and runs the chosen subcommand; returns the exit status
// (0 success, 1 usage error, 2 bad input).
int run(int argc, char** argv);
}  // namespace ts::cli
