// One command-line convention for every htrace tool, on CLI11 (Debian's libcli11-dev):
//   --help     usage on stdout, exit 0
//   --version  "<tool> <HTRACE_VERSION_STRING>" on stdout, exit 0
//   a usage error: "<tool>: error: <what>" and a hint to --help on stderr, exit 2.
// Parsing prints nothing and never exits: an MPI tool parses on every rank, lets rank 0 alone
// speak and finalizes MPI before it exits.
#pragma once

#include "outcome.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace htrace::cli {

/// Sets the conventions on `app` (named after the tool): -h/--help, --version, and unknown
/// arguments left for parse() to name.
void configure(CLI::App& app);

/// Cross-option rules checked after a successful parse: an error message, or "" if all is well.
using Check = std::function<std::string()>;

/// Parses argv[1..argc) into the options bound to `app`, then runs `check`.
Outcome parse(CLI::App& app, int argc, const char* const* argv, const Check& check = {});

/// A value check in the tools' wording: the value must be a number (strtod, all of it) that
/// `accept` takes; otherwise "'<value>' is not <form>", e.g. form "a non-negative number".
CLI::Validator number(const std::string& form, std::function<bool(double)> accept);

/// A whole decimal number in lo..hi; otherwise "'<value>' is not an integer in lo..hi" (or
/// "an integer >= lo" when hi is LONG_MAX).
CLI::Validator integer(long lo, long hi);

} // namespace htrace::cli
