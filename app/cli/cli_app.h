#pragma once
namespace ts::cli {
// Parses the command line and runs the chosen subcommand; returns the exit status
// (0 success, 1 usage error, 2 bad input, 3 internal error,
// 4 no usable GPU for a command that needs one).
int run(int argc, char** argv);
}  // namespace ts::cli
