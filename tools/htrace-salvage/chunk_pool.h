// OTF2's writer keeps every chunk of an event buffer in memory until the writer is closed: a
// location's whole output. It writes the chunks out earlier only when its memory callbacks say
// that no memory is left. These callbacks give each event buffer a few chunks, reused after each
// such write, so that copying a location holds O(chunk) memory however many events it has.
#pragma once

#include <otf2/otf2.h>

namespace htrace::salvage {

/// Chunks an event buffer holds before OTF2 writes them to its file. Definition buffers are not
/// bounded: a location's mapping tables and the global definitions, each written in one go.
constexpr unsigned kChunksPerEventBuffer = 4;

/// Installs the callbacks on an archive opened for writing, before any writer is created.
OTF2_ErrorCode bound_event_buffers(OTF2_Archive* archive);

} // namespace htrace::salvage
