// Which members of an OTF2 collective operation wait for which: the rules htrace-correct turns
// into logical messages (collective.h) and htrace-report counts clock-condition violations with.
// They need OTF2's operation codes only.
#ifndef HTRACE_FORMAT_COLLECTIVE_RULES_H
#define HTRACE_FORMAT_COLLECTIVE_RULES_H

#include <cstdint>

namespace htrace::format {

enum class CollectivePattern : uint8_t {
  AllToAll, // barrier, all-to-all kinds, allreduce/allgather, reduce_scatter, comm create/destroy:
            // every end after every other member's begin
  OneToN,   // bcast, scatter[v]: non-root ends after the root's begin
  NToOne,   // reduce, gather[v]: the root's end after every other begin
  Prefix,   // scan, exscan: the end of rank r after the begins of ranks < r
};
CollectivePattern collective_pattern(uint32_t otf2_collective_op);

/// Whether a member's end waits for other members: only if data reaches it (MPI returns at once
/// from a collective that moves no data to the caller, e.g. a bcast of count 0), or the operation
/// synchronizes by itself. MPI_Comm_free need not synchronize (Open MPI's is local).
bool collective_end_waits(uint32_t otf2_collective_op, uint64_t bytes_received);

} // namespace htrace::format

#endif
