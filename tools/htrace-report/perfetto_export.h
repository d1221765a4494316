// The archive as Chrome/Perfetto JSON Trace Event Format, written while the events stream past:
// processes = ranks (location groups), threads = locations, complete slices ("X") = regions, flow
// events ("s" -> "f") = messages (send -> receive) and collective participation (root, or rank 0
// of rootless collectives, -> every other member), counter events ("C") = Metric records' values,
// one counter track per metric member and location (metric_value.h converts the values).
// Timestamps are microseconds from the trace start with three decimals, so nanoseconds are kept
// exactly (see json_text.h). An ExportSelection (export_selection.h) limits the output to a window
// and a cap: slices are kept or left out whole, and a flow is written only with both its ends, so
// message and collective flow ends wait for their partner (one entry per message in flight).
#pragma once

#include "archive_defs.h"
#include "event_scan.h"
#include "export_selection.h"
#include "message_ends.h"
#include "metric_defs.h"
#include "relations/collective_bounds.h"
#include "relations/location_channels.h"
#include "relations/member_ranks.h"
#include "relations/ref_index.h"

#include <map>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

namespace htrace::report {

/// Where a message end's flow attaches (PerfettoExport::anchor_time when its record was read).
struct FlowEnd {
  std::uint32_t loc = 0;
  std::uint64_t anchor = 0;
  Verdict verdict = Verdict::Kept; ///< of the record, decided when it was read
};

/// What an export drew, and what it could not.
struct PerfettoCounts {
  std::uint64_t slices = 0, flows = 0, counter_values = 0;
  /// Records the export has a picture for (drawn unless --window or --max-events leave them out):
  /// Enter/Leave pairs as slices, matched message ends and collective ends as flows, Metric
  /// records as counter values. The others (request records, unmatched ends, kinds the export has
  /// no picture for) are not.
  std::uint64_t records_drawn = 0;
  std::uint64_t trace_events = 0; ///< JSON records written, metadata included
  std::string left_out;           ///< left_out_line() of the selection, "" if nothing
  /// Metric values left out: NaN or infinite (JSON has no such numbers), or of a metric the
  /// definitions lack.
  std::uint64_t values_not_finite = 0, values_undefined = 0;
};

class PerfettoExport final : public MatchingSink<FlowEnd> {
public:
  PerfettoExport(const ArchiveDefs& defs, const MetricDefs& metrics, std::ostream& out,
                 const ExportLimits& limits = {});
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) override;
  void collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op, std::uint32_t comm,
                  std::uint32_t root, std::uint64_t sent, std::uint64_t received) override;
  void metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric, std::uint8_t n,
              const OTF2_Type* types, const OTF2_MetricValue* values) override;
  void finish() override;

  const PerfettoCounts& counts() const { return counts_; }

private:
  struct Open {
    std::uint32_t region;
    std::uint64_t start;
    Verdict verdict;
  };
  /// A flow end waiting for its partner.
  struct PendingFlow {
    char phase;
    const char* cat;
    FlowEnd end;
  };
  void begin_record();
  /// The time of the event being handled, in ns from the start; decides open slices' fate when the
  /// window begins.
  std::int64_t advance(std::uint64_t t);
  /// One end of flow `id`: both are written once both are here and kept.
  void offer(std::uint64_t id, char phase, const char* cat, const FlowEnd& end);
  void ids(std::uint32_t loc);
  /// Where a flow end attaches: the start of the innermost open slice (or `t` outside slices).
  std::uint64_t anchor_time(std::uint32_t loc, std::uint64_t t) const;
  /// Writes a flow end at `anchor` (anchor_time() when its record was read).
  void flow(char phase, std::uint32_t loc, std::uint64_t anchor, std::uint64_t id, const char* cat);
  void other_data();
  /// The counter track of `member` on location `loc`, as a JSON string: "<location>: <member>
  /// [<unit>]" (Perfetto keys JSON counter tracks by process and name).
  const std::string& counter_name(std::uint32_t loc, OTF2_MetricMemberRef member);
  /// A message end's flow, in MPI's matching order.
  void matched_end(const relations::MessageEnd<FlowEnd>& end) override;

  const ArchiveDefs& defs_;
  relations::RefIndex<Comm> comms_; ///< defs_.comms
  const MetricDefs& metrics_;
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
  relations::MemberRanks ranks_;                                          ///< by location
  std::vector<relations::CollectiveNumbering> coll_count_; // per location: its calls per comm
  std::uint64_t next_instance_ = 0;
  std::map<std::pair<std::uint32_t, OTF2_MetricMemberRef>, std::string> counter_names_;
  std::unordered_map<std::uint64_t, PendingFlow> pending_flows_; ///< by flow id
  PerfettoCounts counts_;
  ExportSelection selection_;
};

} // namespace htrace::report
