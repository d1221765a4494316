// The archive as Chrome/Perfetto JSON Trace Event Format, written while the events stream past:
// processes = ranks (location groups), threads = locations, complete slices ("X") = regions, flow
// events ("s" -> "f") = messages (send -> receive) and collective participation (root, or rank 0
// of rootless collectives, -> every other member). Timestamps are microseconds from the trace
// start with three decimals, so nanoseconds are kept exactly (see json_text.h).
#pragma once

#include "archive_defs.h"
#include "event_scan.h"
#include "message_channels.h"

#include <map>
#include <ostream>
#include <vector>

namespace htrace::report {

class PerfettoExport final : public EventSink {
public:
  PerfettoExport(const ArchiveDefs& defs, std::ostream& out);
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes) override;
  void recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
            std::uint32_t tag, std::uint64_t bytes) override;
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
  void flow(char phase, std::uint32_t loc, std::uint64_t t, std::uint64_t id, const char* cat);

  const ArchiveDefs& defs_;
  std::ostream& out_;
  bool first_ = true;
  std::vector<std::vector<Open>> stacks_;
  std::vector<std::uint32_t> tid_;
  MessageNumbering messages_;
  struct Instance {
    std::uint64_t number;
    std::uint32_t seen = 0;
  };
  std::map<std::pair<std::uint32_t, std::uint64_t>, Instance> instances_; // (comm, k) in flight
  std::vector<std::map<std::uint32_t, std::uint64_t>> coll_count_;        // per location: comm -> k
  std::uint64_t next_instance_ = 0;
  std::uint64_t slices_ = 0, flows_ = 0;
};

} // namespace htrace::report
