// The tessera command line: subcommands, flags and exit codes.
//
// Exit codes (docs/cli.md): 0 success; 1 runtime failure (I/O, an internal check); 2 invalid
// input (bad config, bad flags, bad CSV); 3 `place` could not place every task.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace tessera::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitInvalidInput = 2;
inline constexpr int kExitNotAllPlaced = 3;  // place: a task is pending or infeasible

int Main(int argc, char** argv);
// The same, with explicit streams, for tests.
int Run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace tessera::cli
