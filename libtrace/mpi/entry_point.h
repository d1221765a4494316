// Marks a function the traced application (or its MPI library's Fortran layer) must resolve in
// libhtrace.so. libhtrace is compiled with -fvisibility=hidden, so these entry points, the public
// C API (include/htrace/) and ompt_start_tool are its only exported symbols: nothing internal
// lands in the application's symbol namespace or can be interposed by it.
// (mpi.h of Open MPI already declares MPI_* with default visibility; the explicit attribute keeps
// that true for an mpi.h that does not, and is what makes the Fortran symbols visible.)
#pragma once

#define HTRACE_ENTRY_POINT extern "C" __attribute__((visibility("default")))
