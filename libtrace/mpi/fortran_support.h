// Conversions used by the generated Fortran entry points (fortran.gen.cpp): the Fortran
// sentinels (MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY are
// addresses of variables of the MPI's Fortran library) and request/status arrays in Fortran
// layout. Open MPI: the mpif.h sentinels (common blocks). MPICH ABI: the `use mpi_f08` ones, the
// only Fortran procedures htrace interposes there (fortran_gen.py). No allocation for up to 32
// elements.
#pragma once

#include "mpi/wrapper_call.h"

#include <cstddef>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <mpi.h>

extern "C" {
#if defined(MPICH)
extern int __mpi_f08_link_constants_MOD_mpi_unweighted __attribute__((weak));
extern int __mpi_f08_link_constants_MOD_mpi_weights_empty __attribute__((weak));
#else
extern int mpi_fortran_bottom_ __attribute__((weak));
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_status_ignore_ __attribute__((weak));
extern int mpi_fortran_statuses_ignore_ __attribute__((weak));
extern int mpi_fortran_unweighted_ __attribute__((weak));
extern int mpi_fortran_weights_empty_ __attribute__((weak));
#endif
}

namespace htrace::mpi {

static_assert(sizeof(MPI_Fint) == sizeof(int), "Fortran INTEGER arguments are passed as int");

/// Nothing is recorded and no call is being counted (fortran_gen.py: passing_through): the
/// Fortran entry points hand their arguments, unconverted, to the program's MPI library.
inline bool fortran_passes_through() {
  return !g_wrappers.tracing.load(std::memory_order_relaxed) &&
         !g_wrappers.paused.load(std::memory_order_relaxed) &&
         !g_wrappers.budget_spent.load(std::memory_order_relaxed);
}

/// The definition of `symbol` after libhtrace's in the lookup order: the program's MPI library's.
template <typename Function> Function next_definition(const char* symbol) {
  return reinterpret_cast<Function>(dlsym(RTLD_NEXT, symbol));
}
constexpr std::size_t kStatusFints = sizeof(MPI_Status) / sizeof(MPI_Fint);

#if defined(MPICH)
inline bool is_status_ignore(const MPI_Fint* f) {
  return static_cast<const void*>(f) == MPI_F08_STATUS_IGNORE;
}
inline bool is_statuses_ignore(const MPI_Fint* f) {
  return static_cast<const void*>(f) == MPI_F08_STATUSES_IGNORE;
}
inline void* fortran_buffer(void* buf) {
  if (buf == &MPIR_F08_MPI_BOTTOM) return MPI_BOTTOM;
  if (buf == &MPIR_F08_MPI_IN_PLACE) return MPI_IN_PLACE;
  return buf;
}
inline bool is_unweighted(const void* weights) {
  return weights == &__mpi_f08_link_constants_MOD_mpi_unweighted;
}
inline bool is_weights_empty(const void* weights) {
  return weights == &__mpi_f08_link_constants_MOD_mpi_weights_empty;
}
#else
inline bool is_status_ignore(const MPI_Fint* f) {
  return f == &mpi_fortran_status_ignore_;
}
inline bool is_statuses_ignore(const MPI_Fint* f) {
  return f == &mpi_fortran_statuses_ignore_;
}
inline void* fortran_buffer(void* buf) {
  if (buf == &mpi_fortran_bottom_) return MPI_BOTTOM;
  if (buf == &mpi_fortran_in_place_) return MPI_IN_PLACE;
  return buf;
}
inline bool is_unweighted(const void* weights) {
  return weights == &mpi_fortran_unweighted_;
}
inline bool is_weights_empty(const void* weights) {
  return weights == &mpi_fortran_weights_empty_;
}
#endif

/// Weight arrays of the distributed-graph functions may be the MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY
/// sentinels.
inline int* fortran_weights(MPI_Fint* weights) {
  if (is_unweighted(weights)) return MPI_UNWEIGHTED;
  if (is_weights_empty(weights)) return MPI_WEIGHTS_EMPTY;
  return weights;
}

/// A small array that lives on the stack up to N elements.
template <typename T, std::size_t N = 32> class SmallArray {
public:
  explicit SmallArray(std::size_t n)
      : data_(n <= N ? local_ : (heap_ = std::make_unique<T[]>(n)).get()) {}
  T* data() { return data_; }

private:
  T local_[N];
  std::unique_ptr<T[]> heap_;
  T* data_;
};

class FortranRequests {
public:
  FortranRequests(MPI_Fint* f, int count)
      : f_(f), n_(count > 0 ? count : 0), c_(static_cast<std::size_t>(n_)) {
    for (int i = 0; i < n_; ++i)
      c_.data()[i] = PMPI_Request_f2c(f_[i]);
  }
  MPI_Request* data() { return c_.data(); }
  void copy_back() {
    for (int i = 0; i < n_; ++i)
      f_[i] = PMPI_Request_c2f(c_.data()[i]);
  }

private:
  MPI_Fint* f_;
  int n_;
  SmallArray<MPI_Request> c_;
};

/// A CHARACTER argument (address + hidden length) as a NUL-terminated C string, leading and
/// trailing blanks removed as Open MPI's own Fortran binding does.
class FortranString {
public:
  FortranString(const char* f, std::size_t len) : c_(len + 1) {
    std::size_t first = 0;
    while (first < len && f[first] == ' ')
      ++first;
    while (len > first && f[len - 1] == ' ')
      --len;
    std::memcpy(c_.data(), f + first, len - first);
    c_.data()[len - first] = '\0';
  }
  const char* get() { return c_.data(); }

private:
  SmallArray<char, 256> c_;
};

/// Entries of the datatype arrays of (neighbor) alltoallw: the communicator's size (the remote
/// group's for an intercommunicator), or the out/in degree of its topology.
inline int alltoallw_types(MPI_Comm comm, bool neighbor, bool send) {
  int n = 0, flag = 0;
  if (!neighbor) {
    PMPI_Comm_test_inter(comm, &flag);
    if (flag != 0)
      PMPI_Comm_remote_size(comm, &n);
    else
      PMPI_Comm_size(comm, &n);
    return n;
  }
  int topo = MPI_UNDEFINED;
  PMPI_Topo_test(comm, &topo);
  if (topo == MPI_CART) {
    PMPI_Cartdim_get(comm, &n);
    return 2 * n;
  }
  if (topo == MPI_GRAPH) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &n);
    return n;
  }
  int in = 0, out = 0, weighted = 0;
  if (topo == MPI_DIST_GRAPH) PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
  return send ? out : in;
}

/// An input array of Fortran datatype handles.
class FortranTypes {
public:
  FortranTypes(const MPI_Fint* f, int count)
      : n_(count > 0 ? count : 0), c_(static_cast<std::size_t>(n_)) {
    for (int i = 0; i < n_; ++i)
      c_.data()[i] = PMPI_Type_f2c(f[i]);
  }
  const MPI_Datatype* data() { return c_.data(); }

private:
  int n_;
  SmallArray<MPI_Datatype> c_;
};

class FortranStatus {
public:
  explicit FortranStatus(MPI_Fint* f) : f_(is_status_ignore(f) ? nullptr : f) {}
  MPI_Status* get() { return f_ ? &c_ : MPI_STATUS_IGNORE; }
  void copy_back() {
    if (f_) PMPI_Status_c2f(&c_, f_);
  }

private:
  MPI_Fint* f_;
  MPI_Status c_{};
};

class FortranStatuses {
public:
  FortranStatuses(MPI_Fint* f, int count)
      : f_(is_statuses_ignore(f) ? nullptr : f), n_(count > 0 ? count : 0),
        c_(static_cast<std::size_t>(f_ ? n_ : 0)) {}
  MPI_Status* get() { return f_ ? c_.data() : MPI_STATUSES_IGNORE; }
  void copy_back() {
    if (!f_) return;
    for (int i = 0; i < n_; ++i)
      PMPI_Status_c2f(&c_.data()[i], f_ + static_cast<std::size_t>(i) * kStatusFints);
  }

private:
  MPI_Fint* f_;
  int n_;
  SmallArray<MPI_Status> c_;
};

} // namespace htrace::mpi
