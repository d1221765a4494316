// The correction ranks of htrace-correct: the processes of an MPI communicator. Every collective
// is nonblocking and waited for with sleeps between tests (mpi_wait.h).
#ifndef HTRACE_CORRECT_MPI_RANK_GROUP_H
#define HTRACE_CORRECT_MPI_RANK_GROUP_H

#include "correct/rank_group.h"

#include <mpi.h>

namespace htrace::correct {

class MpiRankGroup final : public RankGroup {
public:
  // `comm` must outlive the group.
  explicit MpiRankGroup(MPI_Comm comm);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(uint64_t* values, size_t count) override;
  void allreduce_min(int64_t* values, size_t count) override;
  void allreduce_max(int64_t* values, size_t count) override;
  void broadcast(void* data, size_t bytes, int root) override;
  std::vector<int64_t> allgather(const int64_t* mine, size_t count) override;
  // The counts in one MPI_Alltoall, then every peer's words straight from `out` into `in` with
  // point-to-point messages (no packing into one send buffer).
  void alltoall(const WordSpan* out, EventArray<uint64_t>& in) override;
  void barrier() override;
  void allreduce_sum_double(double* values, size_t count) override;
  MPI_Comm comm() const { return comm_; }

private:
  void allreduce_in_place(void* values, size_t count, MPI_Datatype type, MPI_Op op);

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

} // namespace htrace::correct
#endif
