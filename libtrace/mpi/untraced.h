// What went unrecorded, per MPI function: calls excluded by HTRACE_MPI_EXCLUDE, calls made while
// MPI_Pcontrol(0) had recording off, and calls made after the rank's trace reached HTRACE_BUDGET.
// (Every entry point of the MPI and Fortran libraries records: none is only counted, README.)
// Counting is off the hot path: only skipped calls count.
#pragma once

#include "common/region_filter.h"
#include "mpi/function_ids.gen.h"

#include <cstdint>
#include <mpi.h>
#include <string>

namespace htrace::mpi {

enum class Untraced : std::uint8_t { Excluded, Paused, Budget };
constexpr std::size_t kUntracedReasons = 3;

/// One skipped call of `fn` (thread-safe, relaxed atomics).
void note_untraced(FunctionId fn, Untraced why) noexcept;
/// Calls of `fn` counted so far on this process for `why`.
std::uint64_t untraced_calls(FunctionId fn, Untraced why) noexcept;

/// Applies HTRACE_MPI_EXCLUDE to the region table (g_wrappers.regions, after
/// register_function_regions()). Returns one warning per pattern that matched nothing (empty if
/// none).
std::string apply_exclusions(const std::string& spec);
/// Applies the rules of HTRACE_FILTER_FILE to the region table, as apply_exclusions. Returns the
/// number of functions it excludes.
int apply_filter(const RegionFilter& filter);
/// True when `name` (MPI_X) or `family` matches one pattern of `spec` (exposed for the tests).
bool excluded_by(const std::string& spec, const char* name, const char* family);

/// Collective over `comm` (all ranks): sums the counts and has rank 0 log one line per reason,
/// functions by descending count.
void report_untraced(MPI_Comm comm, int rank);

} // namespace htrace::mpi
