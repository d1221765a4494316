// The fixed-size record every event method appends to a thread's buffer. One layout for all kinds
// keeps the hot path a bounds check and a few stores; conversion to OTF2 happens on flush.
#pragma once

#include <cstdint>

namespace htrace::record {

enum class EventKind : std::uint8_t {
  Enter,
  Leave,
  MpiSend,
  MpiIsend,
  MpiIsendComplete,
  MpiIrecvRequest,
  MpiIrecv,
  MpiRecv,
  MpiRequestTest,
  MpiRequestCancelled,
  MpiCollectiveBegin,
  MpiCollectiveEnd,
  MpiNbcRequest,
  MpiNbcComplete,
  RmaWinCreate,
  RmaWinDestroy,
  RmaCollectiveBegin,
  RmaCollectiveEnd,
  RmaGroupSync,
  RmaRequestLock,
  RmaReleaseLock,
  RmaSync,
  RmaPut,
  RmaGet,
  RmaAtomic,
  RmaOpCompleteBlocking,
  RmaOpCompleteNonBlocking,
  RmaOpCompleteRemote,
  RmaOpTest,
  IoCreateHandle,
  IoDestroyHandle,
  IoOperationBegin,
  IoOperationIssued,
  IoOperationTest,
  IoOperationComplete,
  IoSeek,
  IoDeleteFile,
  ThreadFork,
  ThreadJoin,
  ThreadTeamBegin,
  ThreadTeamEnd,
  ThreadAcquireLock,
  ThreadReleaseLock,
  ThreadTaskCreate,
  ThreadTaskSwitch,
  ThreadTaskComplete,
  MeasurementOnOff,
  PollRunLeave,
};

/// Field use by kind: u32[0] region / peer rank / root / lock / creating thread / thread count,
/// u32[1] communicator or team (always this slot, so ids are mapped in one place), u32[2] tag /
/// acquisition order / generation, u64[0] bytes (sent), u64[1] request, u64[2] bytes received;
/// MeasurementOnOff: op = 1 (on) or 0 (off). PollRunLeave: u32[0] region, u64[0] the run's polls,
/// u64[1] the key of the polls' arguments.
/// RMA and I/O kinds: u32[2] window / I/O handle, u32[0] remote rank / root / group / I/O
/// operation or creation flags / file, u64[1] matching id / lock id / sync level, op the OTF2 enum
/// (collective op, sync level or type, lock type, atomic type, access or operation mode, whence).
struct EventRecord {
  std::int64_t time; ///< clock::stamp() (converted to global ns when written)
  std::uint64_t u64[3];
  std::uint32_t u32[3];
  EventKind kind;
  std::uint8_t op; ///< OTF2_CollectiveOp
};
static_assert(sizeof(EventRecord) == 48, "records are fixed-size, 48 bytes");

} // namespace htrace::record
