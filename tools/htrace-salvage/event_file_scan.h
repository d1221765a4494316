// How much of an OTF2 event file is whole. A process that died while OTF2 wrote its file (SIGKILL,
// a full disk) leaves a file that ends inside a chunk, possibly inside a record. OTF2's reader
// takes a short read for a whole chunk and decodes what its reused chunk memory still holds past
// the end: records of an earlier chunk, stamped with the last valid time. The scan walks the
// file's own framing (chunk headers with their event numbers, record types and lengths) without
// decoding records, so that the reader is then asked for exactly the whole events.
#pragma once

#include <cstdint>
#include <string>

namespace htrace::salvage {

struct EventFileExtent {
  std::uint64_t events = 0;  ///< whole event records from the start of the file
  std::uint64_t missing = 0; ///< events the last chunk's header counts beyond the whole ones
  std::string damage;        ///< why the scan stopped before the end of the file ("" if it did not)
};

/// Never throws; a file that cannot be read has 0 events and says why.
EventFileExtent scan_event_file(const std::string& path, std::uint64_t chunk_size);

} // namespace htrace::salvage
