// Private to the archive reader and writer (archive_reader.cpp, archive_writer.cpp).
#ifndef HTRACE_CORRECT_OTF2_MPI_COLLECTIVES_H
#define HTRACE_CORRECT_OTF2_MPI_COLLECTIVES_H

#include "correct/mpi_rank_group.h"
#include "mpi_wait.h"

#include <cstdint>
#include <memory>
#include <mpi.h>
#include <otf2/otf2.h>
#include <stdexcept>

// OTF2's collective context (declared, not defined, by OTF2): the communicator of the ranks that
// share an archive.
struct OTF2_CollectiveContext {
  MPI_Comm comm = MPI_COMM_NULL;
};

namespace htrace::correct {

// OTF2's collective callbacks over MPI, owned by the reader or writer they serve and destroyed
// only after it is closed. OTF2's own OTF2_MPI_*_SetCollectiveCallbacks (OTF2_MPI_Collectives.h)
// free their state when registering fails (as it does for a damaged anchor file), while the
// archive keeps pointers into it and calls them again when it is closed: with more than one rank
// that would crash htrace-correct in OTF2_Reader_Close.
class Otf2Collectives {
public:
  // Collective over `comm` (duplicated: OTF2's messages never meet the engine's).
  explicit Otf2Collectives(MPI_Comm comm) { MPI_Comm_dup(comm, &context_.comm); }
  ~Otf2Collectives() { MPI_Comm_free(&context_.comm); }
  Otf2Collectives(const Otf2Collectives&) = delete;
  Otf2Collectives& operator=(const Otf2Collectives&) = delete;

  OTF2_ErrorCode attach(OTF2_Reader* reader) {
    return OTF2_Reader_SetCollectiveCallbacks(reader, &kCallbacks, nullptr, &context_, nullptr);
  }
  OTF2_ErrorCode attach(OTF2_Archive* archive) {
    return OTF2_Archive_SetCollectiveCallbacks(archive, &kCallbacks, nullptr, &context_, nullptr);
  }

private:
  static MPI_Datatype type(OTF2_Type t) {
    switch (t) {
    case OTF2_TYPE_UINT8:
      return MPI_UINT8_T;
    case OTF2_TYPE_INT8:
      return MPI_INT8_T;
    case OTF2_TYPE_UINT16:
      return MPI_UINT16_T;
    case OTF2_TYPE_INT16:
      return MPI_INT16_T;
    case OTF2_TYPE_UINT32:
      return MPI_UINT32_T;
    case OTF2_TYPE_INT32:
      return MPI_INT32_T;
    case OTF2_TYPE_UINT64:
      return MPI_UINT64_T;
    case OTF2_TYPE_INT64:
      return MPI_INT64_T;
    case OTF2_TYPE_FLOAT:
      return MPI_FLOAT;
    case OTF2_TYPE_DOUBLE:
      return MPI_DOUBLE;
    default:
      return MPI_DATATYPE_NULL;
    }
  }
  static OTF2_CallbackCode result(int rc) {
    return rc == MPI_SUCCESS ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_ERROR;
  }
  static int count(uint32_t n) { return static_cast<int>(n); }
  // Counts and displacements of the root's side of gatherv/scatterv.
  static void layout(const OTF2_CollectiveContext* c, const uint32_t* n, std::vector<int>& counts,
                     std::vector<int>& displs) {
    int size = 1;
    MPI_Comm_size(c->comm, &size);
    counts.resize(static_cast<size_t>(size)), displs.resize(static_cast<size_t>(size));
    for (int r = 0, at = 0; r < size; ++r)
      counts[size_t(r)] = count(n[r]), displs[size_t(r)] = at, at += count(n[r]);
  }
  static bool is_root(const OTF2_CollectiveContext* c, uint32_t root) {
    int rank = 0;
    MPI_Comm_rank(c->comm, &rank);
    return static_cast<uint32_t>(rank) == root;
  }

  static OTF2_CallbackCode get_size(void*, OTF2_CollectiveContext* c, uint32_t* size) {
    int n = 1;
    const int rc = MPI_Comm_size(c->comm, &n);
    *size = static_cast<uint32_t>(n);
    return result(rc);
  }
  static OTF2_CallbackCode get_rank(void*, OTF2_CollectiveContext* c, uint32_t* rank) {
    int r = 0;
    const int rc = MPI_Comm_rank(c->comm, &r);
    *rank = static_cast<uint32_t>(r);
    return result(rc);
  }
  static OTF2_CallbackCode barrier(void*, OTF2_CollectiveContext* c) {
    MPI_Request r;
    const int rc = MPI_Ibarrier(c->comm, &r);
    return result(rc == MPI_SUCCESS ? wait(r) : rc);
  }
  static OTF2_CallbackCode bcast(void*, OTF2_CollectiveContext* c, void* data, uint32_t n,
                                 OTF2_Type t, uint32_t root) {
    MPI_Request r;
    const int rc = MPI_Ibcast(data, count(n), type(t), count(root), c->comm, &r);
    return result(rc == MPI_SUCCESS ? wait(r) : rc);
  }
  static OTF2_CallbackCode gather(void*, OTF2_CollectiveContext* c, const void* in, void* out,
                                  uint32_t n, OTF2_Type t, uint32_t root) {
    MPI_Request r;
    const int rc =
        MPI_Igather(in, count(n), type(t), out, count(n), type(t), count(root), c->comm, &r);
    return result(rc == MPI_SUCCESS ? wait(r) : rc);
  }
  static OTF2_CallbackCode gatherv(void*, OTF2_CollectiveContext* c, const void* in, uint32_t n,
                                   void* out, const uint32_t* out_n, OTF2_Type t, uint32_t root) {
    std::vector<int> counts, displs;
    if (is_root(c, root)) layout(c, out_n, counts, displs);
    MPI_Request r;
    const int rc = MPI_Igatherv(in, count(n), type(t), out, counts.data(), displs.data(), type(t),
                                count(root), c->comm, &r);
    return result(rc == MPI_SUCCESS ? wait(r) : rc);
  }
  static OTF2_CallbackCode scatter(void*, OTF2_CollectiveContext* c, const void* in, void* out,
                                   uint32_t n, OTF2_Type t, uint32_t root) {
    MPI_Request r;
    const int rc =
        MPI_Iscatter(in, count(n), type(t), out, count(n), type(t), count(root), c->comm, &r);
    return result(rc == MPI_SUCCESS ? wait(r) : rc);
  }
  static OTF2_CallbackCode scatterv(void*, OTF2_CollectiveContext* c, const void* in,
                                    const uint32_t* in_n, void* out, uint32_t n, OTF2_Type t,
                                    uint32_t root) {
    std::vector<int> counts, displs;
    if (is_root(c, root)) layout(c, in_n, counts, displs);
    MPI_Request r;
    const int rc = MPI_Iscatterv(in, counts.data(), displs.data(), type(t), out, count(n), type(t),
                                 count(root), c->comm, &r);
    return result(rc == MPI_SUCCESS ? wait(r) : rc);
  }
  // Called by OTF2 when the archive closes; the communicator is freed by the destructor.
  static void release(void*, OTF2_CollectiveContext*, OTF2_CollectiveContext*) {}

  static constexpr OTF2_CollectiveCallbacks kCallbacks = {release, get_size, get_rank, nullptr,
                                                          nullptr, barrier,  bcast,    gather,
                                                          gatherv, scatter,  scatterv};
  OTF2_CollectiveContext context_;
};

// OTF2's collective callbacks for `ranks` (collective); none for a single rank, which OTF2's
// serial callbacks serve.
inline std::unique_ptr<Otf2Collectives> otf2_collectives(RankGroup& ranks) {
  if (ranks.size() == 1) return nullptr;
  const auto* mpi = dynamic_cast<const MpiRankGroup*>(&ranks);
  if (!mpi) throw std::logic_error("OTF2's collectives need MPI ranks");
  return std::make_unique<Otf2Collectives>(mpi->comm());
}

} // namespace htrace::correct
#endif
