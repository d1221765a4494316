// Opening and closing the OTF2 archive with MPI collective callbacks on the tracer's private
// communicator (not a public header).
#pragma once

#include "record/recorder_state.h"

#include <cstddef>
#include <string>

namespace htrace::record {

/// Opens `path` (must not exist; rank 0 creates it) on every rank of s.comm. Collective.
/// Returns "" or the local reason for failure; s.archive is set on success.
std::string open_archive(State& s, const std::string& path);

/// Chunk size of the event files, as the archive's anchor file gives it to readers.
std::size_t archive_event_chunk_size();

/// Path of location `id`'s event file in the archive (OTF2's POSIX layout).
std::string event_file_path(const State& s, LocationId id);

/// Closes the archive (collective over s.comm). Returns "" or the reason.
std::string close_archive(State& s);

} // namespace htrace::record
