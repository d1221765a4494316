#include "format/local_definitions.h"

#include "format/file_descriptor.h"
#include "format/otf2_library.h"
#include "format/parallel_parts.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace fs = std::filesystem;

namespace htrace::format {
namespace {

OTF2_CallbackCode note_mapping_table(void* u, OTF2_MappingType type, const OTF2_IdMap* map) {
  auto* d = static_cast<LocalDefinitions*>(u);
  if (!d->maps.set(type, map)) d->retimed = true;
  return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode note_clock_offset(void* u, OTF2_TimeStamp, int64_t, double) {
  static_cast<LocalDefinitions*>(u)->retimed = true;
  return OTF2_CALLBACK_SUCCESS;
}

// A definition file has the layout of an event file (event_file.h): chunks, each with a chunk
// header, records [id][length][fields], END_OF_FILE after the last. OTF2 numbers the local
// definition records MappingTable 5 and ClockOffset 6 (buffer records take 0 to 4).
constexpr uint8_t kEndOfFile = 2, kChunkHeader = 3, kMappingTable = 5, kClockOffset = 6;
constexpr uint8_t kLittleEndian = 0x42;
constexpr size_t kChunkHeaderSize = 18;

// One record's fields in OTF2's encoding; every read fails past the record's end.
struct Fields {
  const uint8_t* p;
  const uint8_t* end;
  bool byte(uint8_t& out) {
    if (p >= end) return false;
    out = *p++;
    return true;
  }
  // A compressed integer: a byte count n <= 8 and n little-endian bytes, or 0xff for all ones.
  bool compressed(uint64_t& out) {
    uint8_t n = 0;
    if (!byte(n)) return false;
    if (n == 0xff) {
      out = ~uint64_t(0);
      return true;
    }
    if (n > 8 || n > end - p) return false;
    out = 0;
    std::memcpy(&out, p, n); // little-endian host, like the file
    p += n;
    return true;
  }
};

// A MappingTable record's fields: the mapping type, the number of entries, the map's mode
// (dense: a global id per local id from 0; sparse: local and global id pairs), the entries. False
// for anything OTF2's reader might read differently.
bool parse_mapping_table(Fields f, LocalDefinitions& local) {
  uint8_t type = 0, mode = 0;
  uint64_t count = 0;
  if (!f.byte(type) || type >= OTF2_MAPPING_MAX || !f.compressed(count) || !f.byte(mode))
    return false;
  if (mode != OTF2_ID_MAP_DENSE && mode != OTF2_ID_MAP_SPARSE) return false;
  const uint64_t per_entry = mode == OTF2_ID_MAP_DENSE ? 1 : 2;
  if (count > uint64_t(f.end - f.p) / per_entry) return false; // (an id takes at least a byte)
  std::vector<std::pair<uint64_t, uint64_t>> pairs(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    auto& [from, to] = pairs[static_cast<size_t>(i)];
    from = i;
    if ((mode == OTF2_ID_MAP_SPARSE && !f.compressed(from)) || !f.compressed(to)) return false;
  }
  if (f.p != f.end) return false;
  if (!local.maps.set(static_cast<OTF2_MappingType>(type), std::move(pairs)))
    local.retimed = true; // (a second table of a type, or a local id listed twice)
  return true;
}

} // namespace

EventFileLayout read_event_file_layout(OTF2_Reader* reader, const std::string& anchor) {
  EventFileLayout layout;
  // The POSIX substrate keeps <location>.evt files in the directory named like the anchor file.
  OTF2_FileSubstrate substrate = OTF2_SUBSTRATE_UNDEFINED;
  OTF2_Compression compression = OTF2_COMPRESSION_UNDEFINED;
  OTF2_Reader_GetFileSubstrate(reader, &substrate);
  OTF2_Reader_GetCompression(reader, &compression);
  if (substrate == OTF2_SUBSTRATE_POSIX && compression == OTF2_COMPRESSION_NONE)
    layout.event_dir = fs::path(anchor).replace_extension().string();
  uint8_t major = 0, minor = 0, bugfix = 0;
  OTF2_Reader_GetVersion(reader, &major, &minor, &bugfix);
  layout.known_format =
      major < OTF2_VERSION_MAJOR || (major == OTF2_VERSION_MAJOR && minor <= OTF2_VERSION_MINOR);
  // OTF2 reads a missing local definition file as an empty one, and the file holds the
  // location's id mappings: without it, its events would silently use the wrong ids. Writers
  // write one for every location (OTF2's, htrace's, Score-P's), so one is required unless the
  // archive has none at all; htrace's archives always have them.
  if (!layout.event_dir.empty()) {
    char* creator = nullptr;
    if (OTF2_Reader_GetCreator(reader, &creator) == OTF2_SUCCESS && creator) {
      layout.local_defs_required = std::strncmp(creator, "htrace", 6) == 0;
      std::free(creator);
    }
    std::error_code ec;
    for (fs::directory_iterator it(layout.event_dir, ec), end;
         !ec && it != end && !layout.local_defs_required; it.increment(ec))
      if (it->path().extension() == ".def") layout.local_defs_required = true;
  }
  return layout;
}

LocalDefinitionReader::LocalDefinitionReader(OTF2_Reader* reader, const EventFileLayout& layout)
    : reader_(reader), layout_(layout), open_(OTF2_Reader_OpenDefFiles(reader) == OTF2_SUCCESS),
      dir_(open_ && !layout.event_dir.empty()
               ? ::open(layout.event_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)
               : -1),
      callbacks_(OTF2_DefReaderCallbacks_New()) {
  uint64_t event_chunk = 0;
  OTF2_Reader_GetChunkSize(reader, &event_chunk, &chunk_size_);
  OTF2_DefReaderCallbacks_SetMappingTableCallback(callbacks_, note_mapping_table);
  OTF2_DefReaderCallbacks_SetClockOffsetCallback(callbacks_, note_clock_offset);
}

LocalDefinitionReader::~LocalDefinitionReader() {
  OTF2_DefReaderCallbacks_Delete(callbacks_);
  if (open_) OTF2_Reader_CloseDefFiles(reader_);
}

LocalDefinitions LocalDefinitionReader::read(OTF2_LocationRef id, const std::string& name,
                                             Otf2Events otf2_events) {
  LocalDefinitions local;
  if (read_directly(id, buffer_, local, otf2_events)) return local;
  return read_with_otf2(id, name);
}

std::vector<LocalDefinitions>
LocalDefinitionReader::read_all(const std::vector<Location>& locations, Otf2Events otf2_events) {
  std::vector<LocalDefinitions> all(locations.size());
  std::vector<char> done(locations.size(), 0);
  run_in_parts(locations.size(), parts_for(locations.size()),
               [&](size_t, size_t begin, size_t end) {
                 std::vector<uint8_t> buffer;
                 for (size_t i = begin; i < end; ++i) {
                   done[i] = read_directly(locations[i].id, buffer, all[i], otf2_events);
                   all[i].file = {};
                 }
               });
  for (size_t i = 0; i < locations.size(); ++i)
    if (!done[i]) all[i] = read_with_otf2(locations[i].id, std::string(locations[i].name));
  return all;
}

bool LocalDefinitionReader::read_directly(OTF2_LocationRef id, std::vector<uint8_t>& buffer,
                                          LocalDefinitions& local, Otf2Events otf2_events) const {
  if (dir_.get() < 0) return false;
  const std::string name = std::to_string(id) + ".def";
  const FileDescriptor fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return false;
  // One chunk, with its header and END_OF_FILE (an empty file is OTF2's reader's to judge), read
  // whole: a byte more than the limit tells a larger file without a stat.
  const size_t limit = std::min<uint64_t>(kDirectLimit, chunk_size_);
  if (buffer.size() < limit + 1) buffer.resize(limit + 1);
  const ssize_t got = read_up_to(fd.get(), buffer.data(), limit + 1, 0);
  if (got < 0) return false;
  const size_t size = static_cast<size_t>(got);
  if (size <= kChunkHeaderSize || size > limit) return false;
  local.file = {reinterpret_cast<const char*>(buffer.data()), size};
  const uint8_t* p = buffer.data();
  const uint8_t* const end = p + size;
  if (p[0] != kChunkHeader || p[1] != kLittleEndian) return false;
  p += kChunkHeaderSize;
  bool records = false;
  while (p < end) {
    const uint8_t record = *p;
    if (record == kEndOfFile) return !(records && otf2_events == Otf2Events::Maybe);
    if (record != kMappingTable && record != kClockOffset) return false;
    // The length: one byte, or 0xff and 8 bytes. A record ends before its chunk's last byte.
    const uint8_t* fields = p + 2;
    uint64_t length = p + 1 < end ? p[1] : 0xff;
    if (length == 0xff) {
      if (end - p < 10) return false;
      std::memcpy(&length, p + 2, 8);
      fields = p + 10;
    }
    if (fields > end || length >= uint64_t(end - fields)) return false;
    const uint8_t* const next = fields + length;
    if (record == kClockOffset)
      local.retimed = true; // (OTF2's reader applies them to the times; the decoder does not)
    else if (!parse_mapping_table(Fields{fields, next}, local))
      return false;
    records = true;
    p = next;
  }
  return false; // no END_OF_FILE
}

LocalDefinitions LocalDefinitionReader::read_with_otf2(OTF2_LocationRef id,
                                                       const std::string& name) {
  LocalDefinitions local;
  local.by_otf2 = true;
  const fs::path file = fs::path(layout_.event_dir) / (std::to_string(id) + ".def");
  const std::string where =
      "location " + std::to_string(id) + " (" + name + "): '" + file.string() + "'";
  if (layout_.local_defs_required) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) {
      local.error = where + ": missing local definition file (" + ec.message() + ")";
      return local;
    }
    if (size == 0) {
      local.error = where + ": empty local definition file";
      return local;
    }
  }
  if (!open_) {
    local.retimed = true; // unknown: leave the location to OTF2's reader
    return local;
  }
  // OTF2 opens the file here and reads its first chunk: no reader means a damaged file, or none at
  // all where none is required.
  OTF2_DefReader* dr = OTF2_Reader_GetDefReader(reader_, id);
  std::error_code ec;
  if (!dr && !layout_.local_defs_required && !fs::exists(file, ec)) {
    forget_otf2_diagnostics(); // (OTF2 complained about the missing file)
    return local;
  }
  if (!dr) {
    local.error =
        where + ": corrupt local definition file (" + otf2_cause(OTF2_ERROR_INVALID_DATA) + ")";
    return local;
  }
  OTF2_Reader_RegisterDefCallbacks(reader_, dr, callbacks_, &local);
  uint64_t n = 0;
  const OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(reader_, dr, &n);
  OTF2_Reader_CloseDefReader(reader_, dr);
  if (rc != OTF2_SUCCESS)
    local.error = where + ": corrupt local definition file (" + otf2_cause(rc) + ")";
  return local;
}

} // namespace htrace::format
