// The one diagnostic path of libhtrace: rank-prefixed, verbosity-gated lines on stderr, and
// appended to a file too where the user names one (a launcher may drop ranks' output).
// The preload library never exits or throws across PMPI; it reports and carries on.
#pragma once

namespace htrace::log {

enum class Level { Error = 0, Warning = 1, Info = 1, Debug = 2 };

/// Set once the options are known (verbosity) and once MPI is up (world rank, -1 before).
void configure(int verbosity);
void set_rank(int world_rank);
/// Also append every line to `path` (empty: stderr only). Ranks may share the file: each line is
/// one write(2) with O_APPEND. A file that cannot be opened is reported and ignored.
void set_file(const char* path);
bool enabled(Level level);

/// printf-style; prints "htrace[<rank>]: <level>: <message>\n" as one write(2).
void error(const char* format, ...) __attribute__((format(printf, 1, 2)));
void warning(const char* format, ...) __attribute__((format(printf, 1, 2)));
/// A warning every rank of a uniform program may give alike (HTRACE_BUDGET reached, events
/// dropped, a node whose ranks do not share a clock): on stderr from world ranks below
/// kRanksWarningOnStderr only (and before MPI_Init), from every rank at verbosity Debug, so that
/// 100,000 ranks do not write 100,000 lines; to the log file from every rank.
constexpr int kRanksWarningOnStderr = 8;
void rank_warning(const char* format, ...) __attribute__((format(printf, 1, 2)));
void info(const char* format, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* format, ...) __attribute__((format(printf, 1, 2)));

} // namespace htrace::log
