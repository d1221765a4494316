// Writes the self-contained HTML report: the page template and Apache ECharts (both embedded in
// the tool at build time) with the report's data as one JSON block.
#pragma once

#include "archive_defs.h"
#include "clock_conditions.h"
#include "message_probe.h"
#include "profile.h"
#include "wait_states_json.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace htrace::report {

/// Clock-condition violations of one archive by kind of logical message.
struct ViolationCounts {
  ConditionCounts p2p, collectives, openmp;
  std::uint64_t incomplete_collectives = 0;
};

/// The archive a corrected one was made from (--before): its violations, and its most violated
/// message as it was there and as it is in the corrected archive.
struct BeforeAfter {
  std::string archive; ///< as given on the command line
  ViolationCounts before;
  bool has_message = false; ///< the archive before had a p2p violation
  P2pChannel channel{};     ///< the message's channel and its number there
  std::uint64_t index = 0;
  MessageRecord send{}, recv{}; ///< its records
  ProbedEvent send_before, recv_before, send_after, recv_after;
};

struct HtmlInputs {
  std::string archive;         ///< as given on the command line
  std::uint64_t archive_bytes; ///< size of all files of the archive
  std::uint64_t events_read;
  std::string correction_json;                     ///< htrace-correct --json output, or ""
  ViolationCounts counts;                          ///< of this archive
  const BeforeAfter* before_after = nullptr;       ///< with --before
  const RunAnalysis* analysis = nullptr;           ///< wait states and efficiency of this archive
  const BeforeAnalysis* before_analysis = nullptr; ///< with --before
};

void write_html(std::ostream& out, const ArchiveDefs& defs, const Profile& profile,
                const HtmlInputs& in);

} // namespace htrace::report
