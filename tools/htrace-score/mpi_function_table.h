// libhtrace's MPI functions as htrace-score needs them: family, whether HTRACE_MPI_EXCLUDE may
// exclude a function, which of its calls an exclusion still records, and what its records mean to
// the analysis. Generated from libtrace/mpi/mpi_functions.txt with gen_wrappers.py's own rules
// (gen_function_table.py), every row of both MPIs, so archives of either (and of other tools,
// whose MPI regions carry the same names) are classified alike.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace htrace::score {

/// Which calls of an excluded function libhtrace still records (wrapper_call.h, REVEAL).
enum class Kept : std::uint8_t {
  Never,            ///< an excluded function records nothing
  IfCompleted,      ///< a wait or test that completes a request is recorded
  Always,           ///< MPI_Waitall: recorded whenever its count is not 0, completions or not
  UnlessMissedPoll, ///< MPI_Improbe: recorded when it finds a message, which leaves no record
};

/// What the records of a function's calls are for in the analysis.
enum class Effect : std::uint8_t {
  Send,
  Receive,
  SendReceive,
  Completion,
  Probe,
  Start,
  Collective,
  NbCollective,
  Rma,
  Io,
  Other,
};

struct MpiFunction {
  const char* name;
  const char* family; ///< a family of HTRACE_MPI_EXCLUDE (p2p, coll, ...)
  bool excludable;    ///< HTRACE_MPI_EXCLUDE may exclude it
  Kept kept;
  bool poll; ///< folded into runs of unsuccessful calls (HTRACE_POLL_RUNS)
  Effect effect;
};

/// The function named `name` (MPI_Send), or nullptr if libhtrace's table lacks it.
const MpiFunction* find_mpi_function(std::string_view name);

/// The families of HTRACE_MPI_EXCLUDE, in the order its help lists them.
const std::vector<std::string>& mpi_families();

/// What excluding functions of this effect costs the analysis (one sentence).
const char* analysis_loss(Effect effect);

} // namespace htrace::score
