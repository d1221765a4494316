// Reads the owned locations once: the times of all events, the records that take part in logical
// messages into links (mpi_relations.cpp, openmp_relations.cpp), and whatever the rewrite needs:
// nothing when the event file can be copied record by record, else every record (record store).
#include "correct/model_reader.h"

#include "format/event_file.h"
#include "format/file_prefetch.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"
#include "location_reader.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/stat.h>

namespace htrace::correct {
namespace {

using EvtCallbacks = std::unique_ptr<OTF2_EvtReaderCallbacks, void (*)(OTF2_EvtReaderCallbacks*)>;

// How errors name a location.
std::string location_label(const LocationInfo& info) {
  return "location " + std::to_string(info.id) + " (" + info.name + ")";
}

// This library's event record types: the decoder reports others too (on_other_event).
const int kKnownEventTypes = format::event_record_type_count();

// A record of a type newer than this OTF2 library: it cannot be carried, only counted.
OTF2_CallbackCode on_unknown(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void* u,
                             OTF2_AttributeList*) {
  self(u)->unknown++;
  return OTF2_CALLBACK_SUCCESS;
}

// An event the decoder gives no callback: its time and type, as store_<Name> keeps them for a
// location whose records are not kept (or one of a type unknown to this library, as on_unknown).
void on_other_event(void* u, OTF2_TimeStamp time, int type) {
  LocationReader* r = self(u);
  if (type >= kKnownEventTypes) {
    r->unknown++;
    return;
  }
  r->times->push_back(static_cast<int64_t>(time));
  ++r->counts[type];
}

format::EventDecodeCallbacks relation_callbacks() {
  format::EventDecodeCallbacks cbs;
  register_mpi_relations(cbs);
  register_openmp_relations(cbs);
  return cbs;
}

// The store callbacks of every event type, for OTF2's reader (userData: an EventStoreSink).
EvtCallbacks store_callbacks() {
  EvtCallbacks cbs(OTF2_EvtReaderCallbacks_New(), OTF2_EvtReaderCallbacks_Delete);
  register_store_events(cbs.get());
  return cbs;
}

// Reads a location's events with the decoder; false if the file cannot be opened or parsed at all
// (before any event), which leaves it to OTF2's reader. Throws on malformed data after that.
bool decode_location(const ReadPlan& plan, const LocationInfo& info,
                     const format::EventDecodeCallbacks& relations, format::FilePrefetch& files,
                     size_t file_index, LocationReader& r) {
  const std::string path = format::event_file_path(plan.event_dir, info.id);
  std::optional<format::MappedFile> file;
  try {
    file.emplace(files.take(file_index));
  } catch (const std::runtime_error&) {
    return false; // (OTF2's reader says what is wrong, naming the location)
  }
  // An event takes at least 2 bytes of the file (see reservable_events).
  r.times->reserve(static_cast<size_t>(std::min<uint64_t>(info.declared_events, file->size() / 2)));
  const format::DecodeError error = format::decode_event_file(
      file->data(), file->size(), plan.chunk_size, relations, on_other_event, info.id,
      static_cast<EventStoreSink*>(&r), plan.id_maps ? plan.id_maps(info.id) : nullptr);
  if (!error) return true;
  if (r.times->empty() && r.unknown == 0) return false;
  throw std::runtime_error(location_label(info) + ": '" + path + "': corrupt event file at byte " +
                           std::to_string(error.offset) + " (" + error.why + ")");
}

// The definitions' event count of a location, as far as its event file can hold it (an event takes
// at least 2 bytes there), for reserving: a damaged count must not take gigabytes before the read
// finds it wrong. Without a file to measure, growth past 2^26 events is left to the reads.
size_t reservable_events(const ReadPlan& plan, const LocationInfo& info) {
  uint64_t bound = uint64_t(1) << 26;
  struct stat st {};
  if (!plan.event_dir.empty() &&
      ::stat(format::event_file_path(plan.event_dir, info.id).c_str(), &st) == 0)
    bound = static_cast<uint64_t>(st.st_size) / 2;
  return static_cast<size_t>(std::min(info.declared_events, bound));
}

// Reads every event of a location through OTF2's reader into `sink`.
void read_with_otf2(OTF2_Reader* reader, const LocationInfo& info, OTF2_EvtReaderCallbacks* cbs,
                    EventStoreSink* sink) {
  OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader, info.id);
  if (!er) throw std::runtime_error(location_label(info) + ": cannot open its event file");
  OTF2_Reader_RegisterEvtCallbacks(reader, er, cbs, sink);
  uint64_t n = 0;
  OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalEvents(reader, er, &n);
  OTF2_Reader_CloseEvtReader(reader, er);
  if (rc != OTF2_SUCCESS)
    throw std::runtime_error(location_label(info) + ": corrupt event file (" +
                             format::otf2_cause(rc) + ")");
}

} // namespace

void read_models(OTF2_Reader* reader, const Definitions& defs,
                 const std::vector<uint32_t>& processes, const ReadPlan& plan, LocalModel& model) {
  const format::EventDecodeCallbacks relations = relation_callbacks();
  const EvtCallbacks cbs = store_callbacks(); // (userData: a LocationReader)
  OTF2_EvtReaderCallbacks_SetUnknownCallback(cbs.get(), on_unknown);
  format::register_with_otf2(relations, cbs.get());
  const size_t types = static_cast<size_t>(format::event_record_type_count());
  model.event_counts.assign(types, 0);
  std::vector<uint64_t> counts(types);
  RawMpiRecords raw;
  // The event files the decoder reads, one entry per location in the order of the loop below.
  std::vector<std::string> paths;
  for (uint32_t p : processes)
    for (uint32_t li : defs.processes[p].locations) {
      const LocationInfo& info = defs.locations[li];
      const bool decodable = !plan.event_dir.empty() && info.declared_events > 0 &&
                             plan.decodable && plan.decodable(info.id);
      paths.push_back(decodable ? format::event_file_path(plan.event_dir, info.id) : "");
    }
  format::FilePrefetch files(std::move(paths));
  size_t file_index = 0;
  for (uint32_t p : processes) {
    ProcessMatcher matcher;
    TaskTracker tasks;
    for (uint32_t li : defs.processes[p].locations) {
      const LocationInfo& info = defs.locations[li];
      model.locations.emplace_back();
      LocationModel& loc = model.locations.back();
      loc.location = li;
      loc.process = p;
      // Copying the file is tried first: its records need not be kept then.
      const bool try_copy = plan.rewrite && !plan.event_dir.empty() && info.declared_events > 0;
      LocationReader r(defs, model, loc, plan.rewrite && !try_copy, raw);
      counts.assign(types, 0);
      r.counts = counts.data();
      r.tasks = &tasks;
      r.model_index = model.locations.size() - 1;
      const std::string where = location_label(info);
      if (info.declared_events > 0) {
        // A location whose records are kept is read through OTF2 (the record store's callbacks).
        const bool decoded = !r.store && plan.decodable && plan.decodable(info.id) &&
                             decode_location(plan, info, relations, files, file_index, r);
        if (!decoded) {
          loc.input.reserve(reservable_events(plan, info));
          read_with_otf2(reader, info, cbs.get(), &r);
        }
        model.unknown_events += r.unknown;
        if (!loc.input.in_range())
          throw input_error(where + ": a timestamp is negative, above 2^62 ns or 2^56 ns away "
                                    "from its predecessor (corrupt event file?)");
        if (loc.input.size() + r.unknown != info.declared_events)
          throw std::runtime_error(where + ": " + std::to_string(loc.input.size()) +
                                   " events read, the definitions declare " +
                                   std::to_string(info.declared_events) +
                                   " (truncated event file?)");
        // Records of types this library does not know cannot be checked in a copy.
        loc.copy_file = try_copy && r.unknown == 0;
        if (try_copy && !loc.copy_file) read_records(reader, info, loc.input.size(), loc.records);
        if (loc.copy_file)
          for (size_t t = 0; t < types; ++t)
            if (counts[t]) loc.type_counts.emplace_back(static_cast<int>(t), counts[t]);
      }
      for (size_t t = 0; t < types; ++t)
        model.event_counts[t] += counts[t];
      matcher.resolve(r, model);
      model.events += loc.input.size();
      ++file_index;
    }
    join_tasks(tasks, p, model);
  }
}

void read_records(OTF2_Reader* reader, const LocationInfo& location, size_t events,
                  RecordStore& records) {
  InputTimes times; // known already
  EventStoreSink sink{&times, &records};
  read_with_otf2(reader, location, store_callbacks().get(), &sink);
  if (times.size() != events)
    throw std::runtime_error(location_label(location) + ": reading its events again found " +
                             std::to_string(times.size()) + " events, not " +
                             std::to_string(events));
}

} // namespace htrace::correct
