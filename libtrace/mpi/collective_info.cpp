#include "mpi/collective_info.h"

#include "mpi/handles.h"

#include <otf2/OTF2_Events.h>

namespace htrace::mpi {
namespace {

using Bytes = std::uint64_t;

Bytes sum(const int counts[], int n) {
  Bytes total = 0;
  for (int i = 0; i < n; ++i)
    total += counts[i] > 0 ? static_cast<Bytes>(counts[i]) : 0;
  return total;
}
Bytes sum_typed(const int counts[], const MPI_Datatype types[], int n) {
  Bytes total = 0;
  for (int i = 0; i < n; ++i)
    total += bytes_of(counts[i], types[i]);
  return total;
}
bool in_place(const void* buf) {
  return buf == MPI_IN_PLACE;
}

// Shape of the communicator as a collective sees it: `peers` is the group data goes to or comes
// from (the communicator for an intracommunicator, the remote group for an intercommunicator).
struct Shape {
  int rank = 0;
  int peers = 0;
  bool inter = false;
};
CommShapeSource g_shape_source = query_comm_shape;

Shape shape_of(MPI_Comm comm) {
  const CommShape c = g_shape_source(comm);
  Shape s;
  s.rank = c.rank;
  s.inter = c.inter;
  s.peers = c.inter ? c.remote_size : c.size;
  return s;
}

// Role of this process in a rooted collective.
enum class Role { Root, Member, Idle };
struct Rooted {
  Shape shape;
  Role role = Role::Member;
  std::uint32_t root = record::kNoRank;
};
Rooted rooted(MPI_Comm comm, int root) {
  Rooted r;
  r.shape = shape_of(comm);
  if (!r.shape.inter) {
    r.role = root == r.shape.rank ? Role::Root : Role::Member;
    r.root = static_cast<std::uint32_t>(root);
  } else if (root == MPI_ROOT) {
    r.role = Role::Root;
    r.root = static_cast<std::uint32_t>(r.shape.rank);
  } else if (root == MPI_PROC_NULL) {
    r.role = Role::Idle;
  } else {
    r.root = static_cast<std::uint32_t>(root);
  }
  return r;
}

CollectiveInfo info(OTF2_CollectiveOp op, std::uint32_t root, Bytes sent, Bytes received) {
  CollectiveInfo i;
  i.op = static_cast<record::CollectiveOp>(op);
  i.root = root;
  i.bytes_sent = sent;
  i.bytes_received = received;
  return i;
}

struct Degrees {
  int in = 0;
  int out = 0;
};
Degrees neighbours(MPI_Comm comm) {
  Degrees d;
  int topo = MPI_UNDEFINED;
  PMPI_Topo_test(comm, &topo);
  if (topo == MPI_CART) {
    int ndims = 0;
    PMPI_Cartdim_get(comm, &ndims);
    d.in = d.out = 2 * ndims;
  } else if (topo == MPI_GRAPH) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Graph_neighbors_count(comm, rank, &d.in);
    d.out = d.in;
  } else if (topo == MPI_DIST_GRAPH) {
    int weighted = 0;
    PMPI_Dist_graph_neighbors_count(comm, &d.in, &d.out, &weighted);
  }
  return d;
}

} // namespace

CommShape query_comm_shape(MPI_Comm comm) {
  CommShape s;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  s.inter = inter != 0;
  PMPI_Comm_rank(comm, &s.rank);
  PMPI_Comm_size(comm, &s.size);
  if (s.inter) PMPI_Comm_remote_size(comm, &s.remote_size);
  return s;
}

void set_comm_shape_source(CommShapeSource source) {
  g_shape_source = source ? source : query_comm_shape;
}

namespace coll {

CollectiveInfo Barrier(MPI_Comm) {
  return info(OTF2_COLLECTIVE_OP_BARRIER, record::kNoRank, 0, 0);
}

CollectiveInfo Bcast(void*, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  const Rooted r = rooted(comm, root);
  const Bytes b = bytes_of(count, type);
  if (r.role == Role::Idle) return info(OTF2_COLLECTIVE_OP_BCAST, r.root, 0, 0);
  if (r.role == Role::Root)
    return info(OTF2_COLLECTIVE_OP_BCAST, r.root, b * static_cast<Bytes>(r.shape.peers),
                r.shape.inter ? 0 : b);
  return info(OTF2_COLLECTIVE_OP_BCAST, r.root, 0, b);
}

CollectiveInfo Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  const Rooted r = rooted(comm, root);
  if (r.role == Role::Idle) return info(OTF2_COLLECTIVE_OP_GATHER, r.root, 0, 0);
  if (r.role == Role::Member)
    return info(OTF2_COLLECTIVE_OP_GATHER, r.root, bytes_of(sendcount, sendtype), 0);
  const Bytes b = bytes_of(recvcount, recvtype);
  if (r.shape.inter)
    return info(OTF2_COLLECTIVE_OP_GATHER, r.root, 0, b * static_cast<Bytes>(r.shape.peers));
  const bool own_in_place = in_place(sendbuf);
  return info(OTF2_COLLECTIVE_OP_GATHER, r.root, own_in_place ? 0 : bytes_of(sendcount, sendtype),
              b * static_cast<Bytes>(r.shape.peers - (own_in_place ? 1 : 0)));
}

CollectiveInfo Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                       const int recvcounts[], const int[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm) {
  const Rooted r = rooted(comm, root);
  if (r.role == Role::Idle) return info(OTF2_COLLECTIVE_OP_GATHERV, r.root, 0, 0);
  if (r.role == Role::Member)
    return info(OTF2_COLLECTIVE_OP_GATHERV, r.root, bytes_of(sendcount, sendtype), 0);
  Bytes total = sum(recvcounts, r.shape.peers);
  const bool own_in_place = !r.shape.inter && in_place(sendbuf);
  if (own_in_place) total -= static_cast<Bytes>(recvcounts[r.shape.rank]);
  const Bytes sent = r.shape.inter || own_in_place ? 0 : bytes_of(sendcount, sendtype);
  return info(OTF2_COLLECTIVE_OP_GATHERV, r.root, sent, total * bytes_of(1, recvtype));
}

CollectiveInfo Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  (void)sendbuf;
  const Rooted r = rooted(comm, root);
  if (r.role == Role::Idle) return info(OTF2_COLLECTIVE_OP_SCATTER, r.root, 0, 0);
  if (r.role == Role::Member)
    return info(OTF2_COLLECTIVE_OP_SCATTER, r.root, 0, bytes_of(recvcount, recvtype));
  const Bytes b = bytes_of(sendcount, sendtype);
  if (r.shape.inter)
    return info(OTF2_COLLECTIVE_OP_SCATTER, r.root, b * static_cast<Bytes>(r.shape.peers), 0);
  const bool own_in_place = in_place(recvbuf);
  return info(OTF2_COLLECTIVE_OP_SCATTER, r.root,
              b * static_cast<Bytes>(r.shape.peers - (own_in_place ? 1 : 0)),
              own_in_place ? 0 : bytes_of(recvcount, recvtype));
}

CollectiveInfo Scatterv(const void*, const int sendcounts[], const int[], MPI_Datatype sendtype,
                        void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm) {
  const Rooted r = rooted(comm, root);
  if (r.role == Role::Idle) return info(OTF2_COLLECTIVE_OP_SCATTERV, r.root, 0, 0);
  if (r.role == Role::Member)
    return info(OTF2_COLLECTIVE_OP_SCATTERV, r.root, 0, bytes_of(recvcount, recvtype));
  Bytes total = sum(sendcounts, r.shape.peers);
  const bool own_in_place = !r.shape.inter && in_place(recvbuf);
  if (own_in_place) total -= static_cast<Bytes>(sendcounts[r.shape.rank]);
  const Bytes received = r.shape.inter || own_in_place ? 0 : bytes_of(recvcount, recvtype);
  return info(OTF2_COLLECTIVE_OP_SCATTERV, r.root, total * bytes_of(1, sendtype), received);
}

CollectiveInfo Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const Shape s = shape_of(comm);
  const Bytes n = static_cast<Bytes>(s.peers);
  if (in_place(sendbuf)) {
    const Bytes b = bytes_of(recvcount, recvtype) * (n - 1);
    return info(OTF2_COLLECTIVE_OP_ALLGATHER, record::kNoRank, b, b);
  }
  return info(OTF2_COLLECTIVE_OP_ALLGATHER, record::kNoRank, n * bytes_of(sendcount, sendtype),
              n * bytes_of(recvcount, recvtype));
}

CollectiveInfo Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                          const int recvcounts[], const int[], MPI_Datatype recvtype,
                          MPI_Comm comm) {
  const Shape s = shape_of(comm);
  const Bytes n = static_cast<Bytes>(s.peers);
  Bytes received = sum(recvcounts, s.peers) * bytes_of(1, recvtype);
  if (in_place(sendbuf)) {
    const Bytes own = bytes_of(recvcounts[s.rank], recvtype);
    return info(OTF2_COLLECTIVE_OP_ALLGATHERV, record::kNoRank, own * (n - 1), received - own);
  }
  return info(OTF2_COLLECTIVE_OP_ALLGATHERV, record::kNoRank, n * bytes_of(sendcount, sendtype),
              received);
}

CollectiveInfo Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void*,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const Bytes n = static_cast<Bytes>(shape_of(comm).peers);
  if (in_place(sendbuf)) {
    const Bytes b = bytes_of(recvcount, recvtype) * (n - 1);
    return info(OTF2_COLLECTIVE_OP_ALLTOALL, record::kNoRank, b, b);
  }
  return info(OTF2_COLLECTIVE_OP_ALLTOALL, record::kNoRank, n * bytes_of(sendcount, sendtype),
              n * bytes_of(recvcount, recvtype));
}

CollectiveInfo Alltoallv(const void* sendbuf, const int sendcounts[], const int[],
                         MPI_Datatype sendtype, void*, const int recvcounts[], const int[],
                         MPI_Datatype recvtype, MPI_Comm comm) {
  const Shape s = shape_of(comm);
  Bytes received = sum(recvcounts, s.peers) * bytes_of(1, recvtype);
  if (in_place(sendbuf)) {
    received -= bytes_of(recvcounts[s.rank], recvtype);
    return info(OTF2_COLLECTIVE_OP_ALLTOALLV, record::kNoRank, received, received);
  }
  return info(OTF2_COLLECTIVE_OP_ALLTOALLV, record::kNoRank,
              sum(sendcounts, s.peers) * bytes_of(1, sendtype), received);
}

CollectiveInfo Alltoallw(const void* sendbuf, const int sendcounts[], const int[],
                         const MPI_Datatype sendtypes[], void*, const int recvcounts[], const int[],
                         const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const Shape s = shape_of(comm);
  Bytes received = sum_typed(recvcounts, recvtypes, s.peers);
  if (in_place(sendbuf)) {
    received -= bytes_of(recvcounts[s.rank], recvtypes[s.rank]);
    return info(OTF2_COLLECTIVE_OP_ALLTOALLW, record::kNoRank, received, received);
  }
  return info(OTF2_COLLECTIVE_OP_ALLTOALLW, record::kNoRank,
              sum_typed(sendcounts, sendtypes, s.peers), received);
}

CollectiveInfo Reduce(const void* sendbuf, void*, int count, MPI_Datatype type, MPI_Op, int root,
                      MPI_Comm comm) {
  const Rooted r = rooted(comm, root);
  const Bytes b = bytes_of(count, type);
  if (r.role == Role::Idle) return info(OTF2_COLLECTIVE_OP_REDUCE, r.root, 0, 0);
  if (r.role == Role::Member) return info(OTF2_COLLECTIVE_OP_REDUCE, r.root, b, 0);
  if (r.shape.inter)
    return info(OTF2_COLLECTIVE_OP_REDUCE, r.root, 0, b * static_cast<Bytes>(r.shape.peers));
  const bool own_in_place = in_place(sendbuf);
  return info(OTF2_COLLECTIVE_OP_REDUCE, r.root, own_in_place ? 0 : b,
              b * static_cast<Bytes>(r.shape.peers - (own_in_place ? 1 : 0)));
}

CollectiveInfo Allreduce(const void* sendbuf, void*, int count, MPI_Datatype type, MPI_Op,
                         MPI_Comm comm) {
  const Bytes n = static_cast<Bytes>(shape_of(comm).peers);
  const Bytes b = bytes_of(count, type) * (in_place(sendbuf) ? n - 1 : n);
  return info(OTF2_COLLECTIVE_OP_ALLREDUCE, record::kNoRank, b, b);
}

CollectiveInfo Reduce_scatter(const void* sendbuf, void*, const int recvcounts[], MPI_Datatype type,
                              MPI_Op, MPI_Comm comm) {
  const Shape s = shape_of(comm);
  const int local = g_shape_source(comm).size; // recvcounts: one entry per local process
  const Bytes size = bytes_of(1, type);
  const Bytes own = recvcounts[s.rank] > 0 ? static_cast<Bytes>(recvcounts[s.rank]) * size : 0;
  Bytes sent = sum(recvcounts, local) * size;
  Bytes received = own * static_cast<Bytes>(s.peers);
  if (in_place(sendbuf)) sent -= own, received -= own;
  return info(OTF2_COLLECTIVE_OP_REDUCE_SCATTER, record::kNoRank, sent, received);
}

CollectiveInfo Reduce_scatter_block(const void* sendbuf, void*, int recvcount, MPI_Datatype type,
                                    MPI_Op, MPI_Comm comm) {
  const Bytes n = static_cast<Bytes>(shape_of(comm).peers);
  const Bytes b = bytes_of(recvcount, type) * (in_place(sendbuf) ? n - 1 : n);
  return info(OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, record::kNoRank, b, b);
}

CollectiveInfo Scan(const void* sendbuf, void*, int count, MPI_Datatype type, MPI_Op, MPI_Comm) {
  const Bytes b = bytes_of(count, type);
  return info(OTF2_COLLECTIVE_OP_SCAN, record::kNoRank, in_place(sendbuf) ? 0 : b, b);
}

CollectiveInfo Exscan(const void* sendbuf, void*, int count, MPI_Datatype type, MPI_Op,
                      MPI_Comm comm) {
  const int rank = shape_of(comm).rank;
  const Bytes b = bytes_of(count, type);
  return info(OTF2_COLLECTIVE_OP_EXSCAN, record::kNoRank, in_place(sendbuf) ? 0 : b,
              rank > 0 ? b : 0);
}

CollectiveInfo Neighbor_allgather(const void*, int sendcount, MPI_Datatype sendtype, void*,
                                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const Degrees d = neighbours(comm);
  return info(OTF2_COLLECTIVE_OP_ALLGATHER, record::kNoRank,
              static_cast<Bytes>(d.out) * bytes_of(sendcount, sendtype),
              static_cast<Bytes>(d.in) * bytes_of(recvcount, recvtype));
}

CollectiveInfo Neighbor_allgatherv(const void*, int sendcount, MPI_Datatype sendtype, void*,
                                   const int recvcounts[], const int[], MPI_Datatype recvtype,
                                   MPI_Comm comm) {
  const Degrees d = neighbours(comm);
  return info(OTF2_COLLECTIVE_OP_ALLGATHERV, record::kNoRank,
              static_cast<Bytes>(d.out) * bytes_of(sendcount, sendtype),
              sum(recvcounts, d.in) * bytes_of(1, recvtype));
}

CollectiveInfo Neighbor_alltoall(const void*, int sendcount, MPI_Datatype sendtype, void*,
                                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  const Degrees d = neighbours(comm);
  return info(OTF2_COLLECTIVE_OP_ALLTOALL, record::kNoRank,
              static_cast<Bytes>(d.out) * bytes_of(sendcount, sendtype),
              static_cast<Bytes>(d.in) * bytes_of(recvcount, recvtype));
}

CollectiveInfo Neighbor_alltoallv(const void*, const int sendcounts[], const int[],
                                  MPI_Datatype sendtype, void*, const int recvcounts[], const int[],
                                  MPI_Datatype recvtype, MPI_Comm comm) {
  const Degrees d = neighbours(comm);
  return info(OTF2_COLLECTIVE_OP_ALLTOALLV, record::kNoRank,
              sum(sendcounts, d.out) * bytes_of(1, sendtype),
              sum(recvcounts, d.in) * bytes_of(1, recvtype));
}

CollectiveInfo Neighbor_alltoallw(const void*, const int sendcounts[], const MPI_Aint[],
                                  const MPI_Datatype sendtypes[], void*, const int recvcounts[],
                                  const MPI_Aint[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  const Degrees d = neighbours(comm);
  return info(OTF2_COLLECTIVE_OP_ALLTOALLW, record::kNoRank,
              sum_typed(sendcounts, sendtypes, d.out), sum_typed(recvcounts, recvtypes, d.in));
}

} // namespace coll
} // namespace htrace::mpi
