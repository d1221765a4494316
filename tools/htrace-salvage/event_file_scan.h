// How much of an OTF2 event file is whole. A process that died while its event file was written
// (SIGKILL, a full disk) leaves a file that ends inside a chunk, possibly inside a record. OTF2's
// reader takes a short read for a whole chunk and decodes what its reused chunk memory still holds
// past the end: records of an earlier chunk, stamped with the last valid time (htrace-correct would
// then wait for collectives that never happened). The scan walks the file with htrace-correct's
// parser of the event-file layout (format/event_file.h), which stops at the first record that is
// not whole, so that OTF2's reader is then asked for exactly the whole events.
#pragma once

#include <cstdint>
#include <string>

namespace htrace::salvage {

struct EventFileExtent {
  std::uint64_t events = 0;  ///< whole event records from the start of the file
  std::uint64_t missing = 0; ///< events the cut chunk's header counts beyond its whole ones
  std::string damage;        ///< why the file ends early ("" if it is complete or empty)
};

/// Never throws; a file that cannot be read has 0 events and says why.
EventFileExtent scan_event_file(const std::string& path, std::uint64_t chunk_size);

} // namespace htrace::salvage
