// Definitions of MPI one-sided windows, PSCW groups, files and MPI_File handles: registered per
// process, unified across ranks in finalize() after the communicators (whose global ids they
// refer to), written as OTF2 RmaWin, Group, IoParadigm, IoRegularFile and IoHandle definitions
// with per-location mapping tables (shared by the recorder and htrace-salvage, which rebuilds
// archives from the same pieces; not installed).
#pragma once

#include "record/recorder.h"

#include <cstdint>
#include <functional>
#include <map>
#include <mpi.h>
#include <string>
#include <vector>

struct OTF2_GlobalDefWriter_struct;
struct OTF2_DefWriter_struct;

namespace htrace::record {

/// MPI_Win_set_name: the window's definition takes the name (unification keeps the name of the
/// lowest rank that created the window).
void rename_rma_win(RmaWinId win, const std::string& name);

/// The process-local definitions (State::rma_io, guarded by State::mutex).
struct RmaIoDefs {
  struct Win {
    std::string name;
    CommId comm = kNoComm;
  };
  struct Handle {
    std::string name;
    IoFileId file = 0;
    CommId comm = kNoComm;
  };
  std::vector<Win> windows;
  std::vector<std::vector<int>> groups; ///< world ranks, in group rank order
  std::map<std::vector<int>, GroupId> group_by_members;
  std::vector<std::string> files;
  std::map<std::string, IoFileId> file_by_name;
  std::vector<Handle> handles;

  bool empty() const {
    return windows.empty() && groups.empty() && files.empty() && handles.empty();
  }
};

/// What one rank contributes, with communicators already in global ids.
struct RmaIoPart {
  std::vector<RmaIoDefs::Win> windows; ///< comm: global id
  std::vector<std::vector<int>> groups;
  std::vector<std::string> files;
  std::vector<RmaIoDefs::Handle> handles; ///< comm: global id, file: index into files
};

/// Local -> global ids of one rank (written as OTF2 mapping tables).
struct RmaIoMaps {
  std::vector<std::uint32_t> windows, groups, files, handles;
};

/// The global definitions (rank 0).
struct RmaIoGlobal {
  std::vector<RmaIoDefs::Win> windows; ///< comm: global id
  std::vector<std::vector<int>> groups;
  std::uint32_t first_group = 0; ///< global id of groups[0] (after the communicators' groups)
  std::vector<std::string> files;
  std::vector<RmaIoDefs::Handle> handles; ///< comm, file: global ids
  bool empty() const {
    return windows.empty() && groups.empty() && files.empty() && handles.empty();
  }
};

/// `mine` with its communicators translated by `comm_map` (local -> global comm id; an id past the
/// end of the map is taken as already global).
RmaIoPart to_part(const RmaIoDefs& mine, const std::vector<std::uint32_t>& comm_map);
/// Pure unification (MPI-free, for tests): windows and handles by (global communicator, k-th on
/// the rank), groups by members, files by name. `maps` gets one entry per part.
RmaIoGlobal unify_rma_io(const std::vector<RmaIoPart>& parts, std::uint32_t first_group,
                         std::vector<RmaIoMaps>& maps);

std::string serialize(const RmaIoPart& part);
bool deserialize(const std::string& bytes, RmaIoPart& part);
std::string serialize(const RmaIoMaps& maps);
bool deserialize(const std::string& bytes, RmaIoMaps& maps);

/// Collective over `comm`: every rank's part to rank 0, unified there, maps back. One allreduce
/// when no rank has any of these definitions. `first_group` matters on rank 0 only. Returns ""
/// or the reason; `global` is filled on rank 0.
std::string exchange_rma_io(const RmaIoDefs& mine, const std::vector<std::uint32_t>& comm_map,
                            std::uint32_t first_group, MPI_Comm comm, int rank, int size,
                            RmaIoMaps& maps, RmaIoGlobal& global);

/// Rank 0: the definitions, after the communicators. `str` interns a string in the caller's
/// string table and returns its id. Returns "" or the reason.
std::string write_rma_io_definitions(OTF2_GlobalDefWriter_struct* writer, const RmaIoGlobal& g,
                                     const std::function<std::uint32_t(const std::string&)>& str);
/// Every location: the four mapping tables (identity maps omitted). Returns an OTF2_ErrorCode.
int write_rma_io_maps(OTF2_DefWriter_struct* writer, const RmaIoMaps& maps);

/// The OTF2 I/O paradigm id of MPI-IO in htrace's archives (the only I/O paradigm htrace writes).
constexpr std::uint32_t kMpiIoParadigm = 0;

} // namespace htrace::record
