// Reads the events of the locations one correction process owns into LocationModels and builds
// the logical-message links (matching of p2p, collectives and OpenMP relations).
#ifndef HTRACE_CORRECT_MODEL_READER_H
#define HTRACE_CORRECT_MODEL_READER_H

#include "correct/collective.h"
#include "correct/definitions.h"
#include "correct/latencies.h"
#include "correct/model.h"

#include <deque>
#include <otf2/otf2.h>

namespace htrace::correct {

struct LocalModel {
  std::vector<LocationModel> locations; // owned locations, process by process
  ChannelTable channels;
  std::deque<CollectiveInstance> collectives; // Channel::values of a collective indexes this
  uint64_t events = 0;
  uint64_t unknown_events = 0; // records of types this OTF2 library does not know (not carried)
};

// Reads all locations of `processes` through `reader` (event files already open), keeping every
// record in LocationModel::records when `keep_records` (the rewrite needs them; --check does not).
// Throws std::runtime_error naming the location on a read error or a record count mismatch.
void read_models(OTF2_Reader* reader, const Definitions& defs,
                 const std::vector<uint32_t>& processes, bool keep_records, LocalModel& model);

} // namespace htrace::correct
#endif
