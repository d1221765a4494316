// What a collective call records in MpiCollectiveEnd / NonBlockingCollectiveComplete: the OTF2
// operation, the root and the bytes this process sends and receives. One function per blocking
// collective, taking exactly its C arguments; the non-blocking variant I<name> reuses it (its
// arguments minus the request).
//
// Conventions (those of Score-P, so that tools compare like with like):
//  - bytes count every block a process contributes or gets, its own included: Bcast root sends
//    n*count, Allreduce sends and receives n*count, Gather root receives n*recvcount;
//  - MPI_IN_PLACE removes the process's own block from both sides;
//  - root: the root's rank in the communicator for rooted operations, kNoRank otherwise. On an
//    intercommunicator, the root group passes MPI_ROOT (recorded as its own local rank, it sends
//    to the whole remote group), MPI_PROC_NULL records no bytes, and the other group records the
//    given root (a rank of the remote group) and receives;
//  - neighborhood collectives map to the OTF2 operation of their pattern (ALLGATHER, ALLGATHERV,
//    ALLTOALL, ALLTOALLV, ALLTOALLW) with bytes over the topology's in/out neighbours.
#pragma once

#include "record/recorder.h"

#include <cstdint>
#include <mpi.h>

namespace htrace::mpi {

struct CollectiveInfo {
  record::CollectiveOp op = 0;
  std::uint32_t root = record::kNoRank;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_received = 0;
};

/// What a collective needs to know about its communicator. The default source asks MPI each time;
/// the wrapper layer installs a per-thread cached one (comm_registry.cpp).
struct CommShape {
  int rank = 0;
  int size = 0;        ///< local group
  int remote_size = 0; ///< remote group of an intercommunicator, else 0
  bool inter = false;
};
using CommShapeSource = CommShape (*)(MPI_Comm);
CommShape query_comm_shape(MPI_Comm comm);
void set_comm_shape_source(CommShapeSource source);

namespace coll {
CollectiveInfo Barrier(MPI_Comm comm);
CollectiveInfo Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm);
CollectiveInfo Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
CollectiveInfo Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm);
CollectiveInfo Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm);
CollectiveInfo Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                        int root, MPI_Comm comm);
CollectiveInfo Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
CollectiveInfo Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm);
CollectiveInfo Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm);
CollectiveInfo Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
CollectiveInfo Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm);
CollectiveInfo Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm);
CollectiveInfo Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm);
CollectiveInfo Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
CollectiveInfo Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm);
CollectiveInfo Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm);
CollectiveInfo Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm);
CollectiveInfo Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm);
CollectiveInfo Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm);
CollectiveInfo Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm);
CollectiveInfo Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm);
CollectiveInfo Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                  const MPI_Datatype recvtypes[], MPI_Comm comm);
} // namespace coll

} // namespace htrace::mpi
