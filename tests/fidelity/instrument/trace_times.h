// Reads what the fidelity comparison needs from an OTF2 archive through OTF2's own reader: every
// event's timestamp per location (in file order), the world rank of each location, the
// point-to-point messages (matched from the records, never from timestamps) and the positions of
// the Enter events of one named region (the probe points of the drift case).
//
// Written for the fidelity comparison only; it deliberately shares no code with htrace's correct/
// engine, whose output it judges.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fidelity {

struct Location {
  uint64_t id = 0;
  int world_rank = -1;
  bool master = false;                // the process's first location (its MPI rank's own)
  std::vector<uint64_t> times;        // every event, in file order
  std::vector<uint32_t> probe_enters; // positions of the Enter events of the probe region
};

// One p2p message: the send event and the receive completion event, as (location index, position).
struct Message {
  uint32_t send_location, send_position;
  uint32_t recv_location, recv_position;
};

struct Trace {
  std::vector<Location> locations; // sorted by location id
  std::vector<Message> messages;   // only when read with messages
  uint64_t unmatched = 0;          // sends or receives without a partner
  uint64_t unresolved = 0;         // p2p records whose peer rank could not be resolved
};

struct ReadOptions {
  bool messages = false;    // match p2p messages
  std::string probe_region; // record the Enter positions of this region (empty: none)
};

// Throws std::runtime_error naming the archive and the failing step.
Trace read_trace(const std::string& archive, const ReadOptions& options);

} // namespace fidelity
