#include "mpi_function_table.h"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace htrace::score {
namespace {

#include "score_functions.gen.h"

} // namespace

const MpiFunction* find_mpi_function(std::string_view name) {
  const auto* end = std::end(kMpiFunctions);
  const auto* it = std::lower_bound(
      std::begin(kMpiFunctions), end, name,
      [](const MpiFunction& f, std::string_view n) { return std::string_view(f.name) < n; });
  return it != end && name == it->name ? it : nullptr;
}

const std::vector<std::string>& mpi_families() {
  static const std::vector<std::string> families = {
      "p2p",  "coll", "nbcoll", "neighbor", "comm",  "group", "topo", "type",
      "info", "err",  "rma",    "io",       "spawn", "tool",  "env",  "misc"};
  return families;
}

const char* analysis_loss(Effect effect) {
  switch (effect) {
  case Effect::Send:
    return "sends: no Late Receiver at them, and their messages lose the send end (the receives "
           "stay, unmatched), so htrace-correct's clock condition has fewer messages";
  case Effect::Receive:
    return "receives: no Late Sender (nor Wrong Order) at them, and their messages lose the "
           "receive end (the sends stay, unmatched), so htrace-correct's clock condition has "
           "fewer messages";
  case Effect::SendReceive:
    return "send-receives: no Late Sender or Late Receiver at them, and their messages lose one "
           "end, so htrace-correct's clock condition has fewer messages";
  case Effect::Completion:
    return "waits and tests: the calls that complete nothing leave the profile (the time spent "
           "polling disappears); a call that completes a request is still recorded";
  case Effect::Probe:
    return "probes: the time spent probing leaves the profile (an MPI_Improbe that finds a "
           "message is still recorded)";
  case Effect::Start:
    return "persistent starts: their messages lose the posting record, so they stay unmatched "
           "for the wait states and the clock condition";
  case Effect::Collective:
    return "collectives: no collective wait states (Wait at Barrier, Wait at N x N, Late "
           "Broadcast, Early Reduce, Early Scan) and no collective clock conditions for "
           "htrace-correct";
  case Effect::NbCollective:
    return "non-blocking collectives: no collective wait states at their completion and no "
           "collective clock conditions for htrace-correct";
  case Effect::Rma:
    return "one-sided communication: no RMA records for these calls";
  case Effect::Io:
    return "MPI-IO: no I/O records for these calls";
  case Effect::Other:
    return "only the time of these calls leaves the profile";
  }
  return "";
}

} // namespace htrace::score
