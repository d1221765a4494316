// Which locations' events can be decoded straight from their event files (event_decoder.h), and
// with which mapping tables: an archive's layout, then each location's local definition file, read
// and closed before the next, so that no file stays open per location. htrace-correct,
// htrace-report and htrace-score decide this here.
//
// A small file holding only mapping tables and clock offsets (what writers put there) is parsed
// here, into a reused buffer: OTF2's reader allocates and clears a buffer of the archive's
// definition chunk size (1 MiB by default) for every file. Anything else (another record, a second
// chunk, a damaged record) is read by OTF2's reader, which also keeps the tables for its own event
// readers; a caller whose location's events OTF2 may read asks for that.
#ifndef HTRACE_FORMAT_LOCAL_DEFINITIONS_H
#define HTRACE_FORMAT_LOCAL_DEFINITIONS_H

#include "format/event_decoder.h"
#include "format/file_descriptor.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <otf2/otf2.h>
#include <string>
#include <string_view>
#include <vector>

namespace htrace::format {

// What an archive's anchor file says about reading its event files directly.
struct EventFileLayout {
  std::string event_dir; // where the <location>.evt files are; empty if not POSIX, or compressed
  bool known_format = false;        // not of a newer OTF2 format than this library's
  bool local_defs_required = false; // every location must have a local definition file
  // Whether a location's events may be decoded directly, local definitions aside.
  bool decodable() const { return !event_dir.empty() && known_format; }
};

// Reads the layout from an opened reader of `anchor` (whose anchor file OTF2 has read).
EventFileLayout read_event_file_layout(OTF2_Reader* reader, const std::string& anchor);

// A location's local definitions as far as they change what OTF2's reader passes for its events:
// mapping tables, which the decoder applies too, and clock offsets, which it does not.
struct LocalDefinitions {
  IdMaps maps;
  bool retimed = false; // clock offsets, tables the decoder does not take, or not readable
  bool by_otf2 = false; // read by OTF2's reader, whose event readers now apply them too
  std::string error;    // a missing, empty or corrupt local definition file, naming it
  // The file's bytes when it was parsed here (empty if OTF2's reader read it), for a tool that
  // carries the file into its output unchanged: writing them saves opening the input again.
  // Valid until the reader's next read().
  std::string_view file;
};

// Whether OTF2's event readers may read the location's events: then the file goes to OTF2's reader
// whenever it holds any record, so that OTF2 applies its mapping tables and clock offsets too.
enum class Otf2Events : bool { No, Maybe };

// Reads local definition files while it lives: opens OTF2's definition files on construction and
// closes them on destruction (both collective in OTF2, so every rank of a parallel reader builds
// and destroys one at the same point). Locations of a POSIX archive are selected by OTF2 when its
// reader reads them; those of any other must be selected.
class LocalDefinitionReader {
public:
  LocalDefinitionReader(OTF2_Reader* reader, const EventFileLayout& layout);
  ~LocalDefinitionReader();
  LocalDefinitionReader(const LocalDefinitionReader&) = delete;
  LocalDefinitionReader& operator=(const LocalDefinitionReader&) = delete;
  // Reads the local definitions of location `id` (`name`: its name, for messages). A missing or
  // empty file is an error where local definitions are required (the location's events would
  // silently use the wrong ids); a damaged one always is.
  LocalDefinitions read(OTF2_LocationRef id, const std::string& name,
                        Otf2Events otf2_events = Otf2Events::Maybe);

  struct Location {
    OTF2_LocationRef id;
    std::string_view name;
  };
  // Reads the local definitions of every location, as read() does, in their order: the files
  // parsed here in parts on threads of their own (parallel_parts.h; at 100,000 locations, the
  // reading one at a time was a fifth of a report's time), then the others by OTF2's reader, one
  // at a time. Their `file` is empty.
  std::vector<LocalDefinitions> read_all(const std::vector<Location>& locations,
                                         Otf2Events otf2_events);
  // The same for any range of definitions with an `id` and a `name`.
  template <class Definitions>
  std::vector<LocalDefinitions> read_all_of(const Definitions& defs, Otf2Events otf2_events) {
    std::vector<Location> locations;
    locations.reserve(std::size(defs));
    for (const auto& d : defs)
      locations.push_back({d.id, d.name});
    return read_all(locations, otf2_events);
  }

  // Files up to this size are parsed here; larger ones are left to OTF2's reader.
  static constexpr size_t kDirectLimit = 64 * 1024;

private:
  // Parses location `id`'s file into `local`, read into `buffer`; false if OTF2's reader must
  // read it. Safe on several threads at once, each with a buffer of its own.
  bool read_directly(OTF2_LocationRef id, std::vector<uint8_t>& buffer, LocalDefinitions& local,
                     Otf2Events otf2_events) const;
  LocalDefinitions read_with_otf2(OTF2_LocationRef id, const std::string& name);

  OTF2_Reader* reader_;
  const EventFileLayout& layout_;
  bool open_;
  // The event directory, for opening files relative to it (O_PATH: searching it is enough); none
  // where files are not parsed here.
  FileDescriptor dir_;
  uint64_t chunk_size_ = 0; // of definition files
  OTF2_DefReaderCallbacks* callbacks_;
  std::vector<uint8_t> buffer_; // read()'s file, at its start
};

} // namespace htrace::format
#endif
