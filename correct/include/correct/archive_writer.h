// The corrected archive: every owned location's records with their corrected timestamps, the
// input's global definitions, and the report's record counts.
#ifndef HTRACE_CORRECT_ARCHIVE_WRITER_H
#define HTRACE_CORRECT_ARCHIVE_WRITER_H

#include "correct/archive_reader.h"
#include "correct/definitions.h"
#include "correct/model_reader.h"
#include "correct/output_directory.h"
#include "correct/report.h"
#include "correct/time_source.h"

#include <map>
#include <string>

namespace htrace::correct {

// Writes every owned location's records with the timestamps `times` produces, then (rank 0) the
// global definitions and the archive `properties`. The reader's event files must still be open.
// Every write, flush and close is checked: a failure is an agreed Output error naming the file.
void write_corrected(ArchiveReader& reader, const Definitions& defs,
                     const std::map<std::string, std::string>& properties, const LocalModel& model,
                     TimeSource& times, const TempOutput& out, RankGroup& ranks, Report& report);

} // namespace htrace::correct
#endif
