// One point-to-point message picked out of an archive by its two records (Profile::worst_send and
// worst_recv: each record's place among its location's point-to-point records): both events with
// the innermost region around each (e.g. the MPI_Send and the MPI_Recv call). The report's
// before/after view reads the same message from an archive and from its corrected copy, whose
// definitions and records are the same.
#pragma once

#include "archive_defs.h"
#include "event_scan.h"
#include "profile.h"

#include <vector>

namespace htrace::report {

struct ProbedEvent {
  bool found = false;
  std::uint32_t loc = 0;
  std::int64_t t = 0; ///< ns from the trace start
  std::uint64_t bytes = 0;
  std::uint32_t region = UINT32_MAX; ///< innermost region around it, if any
  std::int64_t region_begin = 0, region_end = -1;
};

class MessageProbe final : public EventSink {
public:
  MessageProbe(const ArchiveDefs& defs, const MessageRecord& send, const MessageRecord& recv);
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void collective(std::uint32_t, std::uint64_t, std::uint8_t, std::uint32_t, std::uint32_t,
                  std::uint64_t, std::uint64_t) override {}

  ProbedEvent sent, received; ///< after the scan

private:
  struct Open {
    std::uint32_t region;
    std::int64_t begin;
  };
  void capture(ProbedEvent& e, std::uint32_t loc, std::uint64_t t, std::uint64_t bytes);
  /// Captures a point-to-point record of `loc` into `e` if it is the `wanted` one.
  void record(ProbedEvent& e, const MessageRecord& wanted, std::uint32_t loc, std::uint64_t t,
              std::uint64_t bytes);

  const ArchiveDefs& defs_;
  MessageRecord send_, recv_;
  std::vector<std::uint64_t> records_; ///< per location: its point-to-point records so far
  std::vector<std::vector<Open>> stacks_;
  /// Locations and stack depths whose region end is still awaited.
  std::vector<std::pair<ProbedEvent*, std::size_t>> awaiting_;
};

} // namespace htrace::report
