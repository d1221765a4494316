// Waiting for MPI requests without holding a core.
#ifndef HTRACE_CORRECT_MPI_WAIT_H
#define HTRACE_CORRECT_MPI_WAIT_H

#include <mpi.h>

namespace htrace::correct {

/// Completes `requests`, sleeping between tests. MPI libraries poll in their blocking calls, so a
/// correction rank that waits for a slower one would take a core from the ranks and the file
/// threads that still work (every rank reads and creates files ahead on threads). A wait ends at
/// most 200 us after its requests complete; the correction makes a few dozen such waits. Returns
/// MPI_Testall's error code.
int wait_all(int count, MPI_Request* requests);

/// The same for one request.
inline int wait(MPI_Request& request) {
  return wait_all(1, &request);
}

} // namespace htrace::correct
#endif
