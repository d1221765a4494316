// Writes the self-contained HTML report: the page template and Apache ECharts (both embedded in
// the tool at build time) with the report's data as one JSON block.
#pragma once

#include "archive_defs.h"
#include "profile.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace htrace::report {

struct HtmlInputs {
  std::string archive;         ///< as given on the command line
  std::uint64_t archive_bytes; ///< size of all files of the archive
  std::uint64_t events_read;
  std::string correction_json; ///< htrace-correct --json output, or ""
};

void write_html(std::ostream& out, const ArchiveDefs& defs, const Profile& profile,
                const HtmlInputs& in);

} // namespace htrace::report
