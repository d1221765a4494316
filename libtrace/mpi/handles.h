// Small helpers on MPI handles shared by the wrappers' event code.
#ifndef HTRACE_MPI_HANDLES_H
#define HTRACE_MPI_HANDLES_H

#include <cstdint>
#include <cstring>
#include <mpi.h>

namespace htrace::mpi {

/// A handle's bits as a table key (Open MPI handles are pointers, MPICH's are integers).
template <typename Handle> std::uint64_t handle_key(Handle handle) {
  std::uint64_t key = 0;
  std::memcpy(&key, &handle, sizeof handle < sizeof key ? sizeof handle : sizeof key);
  return key;
}

/// Bytes of `count` elements of `type`; 0 for a non-positive count or an unusable type.
inline std::uint64_t bytes_of(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
      size <= 0)
    return 0;
  return static_cast<std::uint64_t>(count) * static_cast<std::uint64_t>(size);
}

} // namespace htrace::mpi
#endif
