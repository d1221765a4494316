// What a tool's command line asks for, and how it is reported (see cli.h). Kept apart from CLI11
// so that headers which carry a parse result do not pull CLI11 into every file.
#pragma once

#include <string>

namespace htrace::cli {

constexpr int kUsageExit = 2;

/// What a command line asks for.
struct Outcome {
  enum class Action { Run, Help, Version, UsageError };
  Action action = Action::Run;
  std::string tool; ///< the program's name, the prefix of every message
  std::string text; ///< help text, version line or error message (without the prefix)

  bool run() const { return action == Action::Run; }
  int exit_code() const { return action == Action::UsageError ? kUsageExit : 0; }
};

/// Prints what `outcome` says (only if `speak`: rank 0 of an MPI tool) and returns its exit code.
int report(const Outcome& outcome, bool speak = true);

} // namespace htrace::cli
