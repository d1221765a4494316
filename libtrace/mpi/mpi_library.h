// Which MPI library the traced program runs on. libhtrace is built for one MPI ABI (Open MPI's, or
// the MPICH family's) and must not interpret a single argument of another: handles, statuses and
// constants differ, and an Open MPI handle (a pointer) does not even fit an MPICH one (an int).
// When libhtrace is loaded, before the program's own code runs, it finds the library that defines
// PMPI_Init for the program; if that is not of its ABI it says so in one line on stderr and
// executes the program again without itself in LD_PRELOAD, so the run is untraced, complete and
// ends with the program's own exit status.
#pragma once

#include <string>

namespace htrace::mpi {

/// The MPI this libhtrace was built for, e.g. "Open MPI".
const char* built_for();

/// False when the program runs on an MPI of another ABI and could not be started again without
/// libhtrace: MPI_Init then leaves tracing off and every wrapper passes its arguments on.
bool program_mpi_matches();

/// The first line of the program's MPI_Get_library_version, e.g. "MPICH Version: 4.0.2".
std::string program_mpi_library();

} // namespace htrace::mpi
