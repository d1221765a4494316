// The archive as Chrome/Perfetto JSON Trace Event Format, written while the events stream past:
// processes = ranks (location groups), threads = locations, complete slices ("X") = regions, flow
// events ("s" -> "f") = messages (send -> receive) and collective participation (root, or rank 0
// of rootless collectives, -> every other member). Timestamps are microseconds from the trace
// start with three decimals, so nanoseconds are kept exactly (see json_text.h).
#pragma once

#include "archive_defs.h"
#include "event_scan.h"
#include "message_ends.h"
#include "relations/collective_bounds.h"

#include <map>
#include <ostream>
#include <vector>

namespace htrace::report {

/// Where a message end's flow attaches (PerfettoExport::anchor_time when its record was read).
struct FlowEnd {
  std::uint32_t loc = 0;
  std::uint64_t anchor = 0;
};

class PerfettoExport final : public MatchingSink<FlowEnd> {
public:
  PerfettoExport(const ArchiveDefs& defs, std::ostream& out);
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op, std::uint32_t comm,
                  std::uint32_t root, std::uint64_t sent, std::uint64_t received) override;
  void finish() override;

  std::uint64_t slices() const { return slices_; }
  std::uint64_t flows() const { return flows_; }

private:
  struct Open {
    std::uint32_t region;
    std::uint64_t start;
  };
  void begin_record();
  void ids(std::uint32_t loc);
  /// Where a flow end attaches: the start of the innermost open slice (or `t` outside slices).
  std::uint64_t anchor_time(std::uint32_t loc, std::uint64_t t) const;
  /// A flow end at `anchor` (anchor_time() when its record was read).
  void flow(char phase, std::uint32_t loc, std::uint64_t anchor, std::uint64_t id, const char* cat);
  /// A message end's flow, in MPI's matching order.
  void matched_end(const relations::MessageEnd<FlowEnd>& end) override;

  const ArchiveDefs& defs_;
  std::ostream& out_;
  bool first_ = true;
  std::vector<std::vector<Open>> stacks_;
  std::vector<std::uint32_t> tid_;
  relations::ChannelNumbers numbers_;
  struct Instance {
    std::uint64_t number;
    std::uint32_t seen = 0;
  };
  std::map<std::pair<std::uint32_t, std::uint64_t>, Instance> instances_; // (comm, k) in flight
  std::vector<relations::CollectiveNumbering> coll_count_; // per location: its calls per comm
  std::uint64_t next_instance_ = 0;
  std::uint64_t slices_ = 0, flows_ = 0;
};

} // namespace htrace::report
