// The wait states of an archive as JSON: one object per pattern with its total, its calls, its
// longest wait and its splits (by waiting location, by the location waited for, by region, by
// communicator), all in integer ns. --format json writes it as the document's "wait_states"; the
// HTML report embeds the same object.
#pragma once

#include "analysis/wait_states.h"
#include "archive_defs.h"

#include <ostream>

namespace htrace::report {

void write_wait_states(std::ostream& out, const ArchiveDefs& defs,
                       const analysis::WaitStates& waits);

/// The whole --format json document: the archive, its locations and its wait states.
void write_json_report(std::ostream& out, const std::string& archive, std::uint64_t events,
                       const ArchiveDefs& defs, const analysis::WaitStates& waits);

} // namespace htrace::report
