// The benchmarks' baseline: every record of an archive read per location and written unchanged
// through OTF2's reader and writer, work split across the ranks like the engine's.
#ifndef HTRACE_BENCH_CORRECT_PLAIN_COPY_H
#define HTRACE_BENCH_CORRECT_PLAIN_COPY_H

#include "correct/archive_reader.h"
#include "correct/mpi_rank_group.h"
#include "format/otf2_library.h"
#include "format/record_tables.h"

#define OTF2_MPI_UINT64_T MPI_UINT64_T
#define OTF2_MPI_INT64_T MPI_INT64_T
#include <mpi.h>
#include <otf2/OTF2_MPI_Collectives.h>
#include <string>
#include <vector>

namespace htrace::bench_copy {

// Collective over `ranks`; more than one rank must be an MpiRankGroup. One rank needs no MPI.
inline void plain_copy(const std::string& anchor, const std::string& out,
                       correct::RankGroup& ranks) {
  using namespace htrace::format;
  const int rank = ranks.rank(), size = ranks.size();
  correct::ArchiveReader reader(anchor, ranks);
  correct::Definitions defs = correct::read_definitions(reader.get());
  std::vector<uint32_t> mine;
  for (uint32_t p = 0; p < defs.processes.size(); ++p)
    if (static_cast<int>(p * size / defs.processes.size()) == rank) mine.push_back(p);
  reader.open_locations(defs, mine);
  OTF2_Archive* ar =
      OTF2_Archive_Open(out.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  OTF2_Archive_SetFlushCallbacks(ar, &kFlushAlways, nullptr);
  if (size > 1)
    OTF2_MPI_Archive_SetCollectiveCallbacks(ar, dynamic_cast<correct::MpiRankGroup&>(ranks).comm(),
                                            MPI_COMM_NULL);
  else
    OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  OTF2_EvtReaderCallbacks* cbs = OTF2_EvtReaderCallbacks_New();
  register_copy_events(cbs);
  UnchangedEvents sink;
  OTF2_Archive_OpenEvtFiles(ar);
  for (uint32_t p : mine)
    for (uint32_t li : defs.processes[p].locations) {
      OTF2_LocationRef id = defs.locations[li].id;
      sink.w = OTF2_Archive_GetEvtWriter(ar, id);
      OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(reader.get(), id);
      OTF2_Reader_RegisterEvtCallbacks(reader.get(), er, cbs, &sink);
      uint64_t n;
      OTF2_Reader_ReadAllLocalEvents(reader.get(), er, &n);
      OTF2_Reader_CloseEvtReader(reader.get(), er);
      OTF2_Archive_CloseEvtWriter(ar, sink.w);
    }
  OTF2_Archive_CloseEvtFiles(ar);
  OTF2_EvtReaderCallbacks_Delete(cbs);
  OTF2_Archive_OpenDefFiles(ar);
  for (uint32_t p : mine)
    for (uint32_t li : defs.processes[p].locations)
      OTF2_Archive_CloseDefWriter(ar, OTF2_Archive_GetDefWriter(ar, defs.locations[li].id));
  OTF2_Archive_CloseDefFiles(ar);
  if (rank == 0) {
    UnchangedDefs d;
    d.w = OTF2_Archive_GetGlobalDefWriter(ar);
    OTF2_GlobalDefReader* gr = OTF2_Reader_GetGlobalDefReader(reader.get());
    OTF2_GlobalDefReaderCallbacks* dc = OTF2_GlobalDefReaderCallbacks_New();
    register_copy_defs(dc);
    OTF2_Reader_RegisterGlobalDefCallbacks(reader.get(), gr, dc, &d);
    OTF2_GlobalDefReaderCallbacks_Delete(dc);
    uint64_t n;
    OTF2_Reader_ReadAllGlobalDefinitions(reader.get(), gr, &n);
    OTF2_Reader_CloseGlobalDefReader(reader.get(), gr);
  }
  OTF2_Archive_Close(ar);
}

} // namespace htrace::bench_copy
#endif
