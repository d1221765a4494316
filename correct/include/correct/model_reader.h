// Reads the events of the locations one correction process owns into LocationModels and builds
// the logical-message links (matching of p2p, collectives and OpenMP relations).
#ifndef HTRACE_CORRECT_MODEL_READER_H
#define HTRACE_CORRECT_MODEL_READER_H

#include "correct/collective.h"
#include "correct/definitions.h"
#include "correct/latencies.h"
#include "correct/model.h"
#include "format/event_decoder.h"

#include <deque>
#include <functional>
#include <otf2/otf2.h>
#include <string>

namespace htrace::correct {

struct LocalModel {
  std::vector<LocationModel> locations; // owned locations, process by process
  ChannelTable channels;
  std::deque<CollectiveInstance> collectives; // Channel::values of a collective indexes this
  uint64_t events = 0;
  std::vector<uint64_t> event_counts; // per record type (record_tables.h numbering)
  uint64_t unknown_events = 0;        // records of types this OTF2 library does not know
};

// Links `event` of `loc` to `channel` in `role`, as the model reader does for every related
// record: receivers wait for every contribution made on this correction rank (`expected`).
inline void add_link(LocationModel& loc, uint32_t event, LinkRole role, uint32_t channel,
                     LocalModel& model) {
  loc.links.push_back({event, role, channel});
  Channel& ch = model.channels.channels[channel];
  if (role == LinkRole::Contribute)
    ch.expected++;
  else
    ch.has_receiver = true;
}

// What the read keeps for writing the corrected archive.
struct ReadPlan {
  bool rewrite = true; // false (--check): only the times
  // Where the input's event files are (ArchiveReader::event_dir), with the archive's event chunk
  // size; empty if the archive does not allow reading them directly. Then they can be copied
  // record by record (event_file.h; the copy itself is checked while it is written), and the
  // events of the locations `decodable` returns true for are decoded straight from their files
  // (event_decoder.h) instead of through OTF2's reader, which decodes every field of every record.
  std::string event_dir;
  uint64_t chunk_size = 0;
  std::function<bool(OTF2_LocationRef)> decodable;
  // A decodable location's mapping tables (null: none).
  std::function<const format::IdMaps*(OTF2_LocationRef)> id_maps;
};

// Reads all locations of `processes`, with the event-file decoder where `plan` allows it, else
// through `reader` (event files already open). To rewrite, a
// location's event file is to be copied directly where the archive allows it
// (LocationModel::copy_file, with the counts the copy is checked against); otherwise its records
// are kept in LocationModel::records. Throws std::runtime_error naming the location on a read
// error or a record count mismatch.
void read_models(OTF2_Reader* reader, const Definitions& defs,
                 const std::vector<uint32_t>& processes, const ReadPlan& plan, LocalModel& model);

// Reads the records of a location that was read before into `records`, for a copy that turned
// out impossible (see rewrite_event_file). Throws std::runtime_error naming the location if the
// read fails or finds another number of events than `events`.
void read_records(OTF2_Reader* reader, const LocationInfo& location, size_t events,
                  RecordStore& records);

} // namespace htrace::correct
#endif
