// A location's events are decoded straight from its event file only where OTF2's reader would
// pass them unchanged: not where its local definitions hold mapping tables or clock offsets. And
// LocalDefinitionReader::read_all, which reads many locations' local definition files in parts on
// threads of their own, against read(), one location at a time: the same mapping tables, clock
// offsets, reader and error for every location, whichever part it falls in.
#include "correct/archive_reader.h"
#include "correct/definitions.h"
#include "format/anchor_file.h"
#include "format/local_definitions.h"
#include "format/otf2_library.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <mpi.h>
#include <otf2/otf2.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace htrace::correct;
using namespace htrace::format;
namespace fs = std::filesystem;

// Location l's local definitions: none for l % 3 == 0, a table mapping local region 0 to global
// region l for 1, a clock offset for 2.
constexpr OTF2_LocationRef kPlain = 0, kMapped = 1, kOffset = 2;
OTF2_LocationRef kind_of(OTF2_LocationRef l) {
  return l % 3;
}

void write_archive(const fs::path& dir, OTF2_LocationRef locations) {
  OTF2_Archive* ar = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 256 * 1024,
                                       256 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(ar, nullptr);
  OTF2_Archive_SetFlushCallbacks(ar, &kFlushAlways, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  OTF2_Archive_OpenEvtFiles(ar);
  for (OTF2_LocationRef l = 0; l < locations; ++l) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, l);
    OTF2_EvtWriter_Enter(w, nullptr, 100, 0);
    OTF2_EvtWriter_Leave(w, nullptr, 200, 0);
    OTF2_Archive_CloseEvtWriter(ar, w);
  }
  OTF2_Archive_CloseEvtFiles(ar);
  OTF2_Archive_OpenDefFiles(ar);
  for (OTF2_LocationRef l = 0; l < locations; ++l) {
    OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(ar, l);
    if (kind_of(l) == kMapped) {
      const uint64_t to_global[] = {l};
      OTF2_IdMap* map = OTF2_IdMap_CreateFromUint64Array(1, to_global, false);
      EXPECT_EQ(OTF2_DefWriter_WriteMappingTable(w, OTF2_MAPPING_REGION, map), OTF2_SUCCESS);
      OTF2_IdMap_Free(map);
    }
    if (kind_of(l) == kOffset) {
      EXPECT_EQ(OTF2_DefWriter_WriteClockOffset(w, 0, 800, 0.0), OTF2_SUCCESS);
    }
    OTF2_Archive_CloseDefWriter(ar, w);
  }
  OTF2_Archive_CloseDefFiles(ar);
  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
  OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, 1000, OTF2_UNDEFINED_TIMESTAMP);
  OTF2_GlobalDefWriter_WriteString(g, 0, "");
  OTF2_GlobalDefWriter_WriteString(g, 1, "main");
  OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  for (OTF2_RegionRef r : {0u, 1u})
    OTF2_GlobalDefWriter_WriteRegion(g, r, 1, 1, 0, OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
                                     OTF2_REGION_FLAG_NONE, 0, 0, 0);
  for (OTF2_LocationRef l = 0; l < locations; ++l) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, l, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, l, 0, OTF2_LOCATION_TYPE_CPU_THREAD, 2, l);
  }
  ASSERT_EQ(OTF2_Archive_Close(ar), OTF2_SUCCESS);
}

TEST(Decodable, UnlessLocalDefinitionsMoveTheEvents) {
  const fs::path dir = fs::temp_directory_path() / ("htrace_decodable_" + std::to_string(getpid()));
  fs::remove_all(dir);
  write_archive(dir, 3);
  {
    SerialRankGroup ranks;
    ArchiveReader reader((dir / "traces.otf2").string(), ranks);
    const Definitions defs = read_definitions(reader.get());
    ASSERT_EQ(defs.processes.size(), 3u);
    reader.open_locations(defs, {0, 1, 2});
    EXPECT_TRUE(reader.decodable(kPlain));
    EXPECT_EQ(reader.id_maps(kPlain), nullptr);
    // Mapping tables are applied by the decoder too, clock offsets are not.
    EXPECT_TRUE(reader.decodable(kMapped));
    ASSERT_NE(reader.id_maps(kMapped), nullptr);
    EXPECT_EQ(reader.id_maps(kMapped)->map(OTF2_MAPPING_REGION, 0), 1u);
    EXPECT_EQ(reader.id_maps(kMapped)->map(OTF2_MAPPING_REGION, 5), 5u); // not in the table
    EXPECT_EQ(reader.id_maps(kMapped)->map(OTF2_MAPPING_COMM, 0), 0u);   // no table
    EXPECT_FALSE(reader.decodable(kOffset));
  }
  fs::remove_all(dir);
}

// Enough locations for two parts of LocalDefinitionReader's threads, on two cores or more.
constexpr OTF2_LocationRef kLocations = 1200;

struct Archive {
  fs::path dir = fs::temp_directory_path() / ("htrace_local_defs_" + std::to_string(getpid()));
  Archive() {
    fs::remove_all(dir);
    write_archive(dir, kLocations);
  }
  ~Archive() { fs::remove_all(dir); }
  fs::path def_file(OTF2_LocationRef l) const {
    return dir / "traces" / (std::to_string(l) + ".def");
  }
};

// Every location's local definitions, by read_all() (`all`) or one read() each.
std::vector<LocalDefinitions> read_archive(const Archive& a, Otf2Events otf2_events, bool all) {
  OTF2_Reader* reader = OTF2_Reader_Open((a.dir / "traces.otf2").c_str());
  EXPECT_NE(reader, nullptr);
  OTF2_Reader_SetSerialCollectiveCallbacks(reader);
  std::vector<LocalDefinitions> read;
  {
    const auto layout =
        htrace::format::read_event_file_layout(reader, (a.dir / "traces.otf2").string());
    EXPECT_TRUE(layout.decodable());
    LocalDefinitionReader local_defs(reader, layout);
    const std::vector<std::string> names(kLocations, "thread");
    std::vector<LocalDefinitionReader::Location> locations;
    for (OTF2_LocationRef l = 0; l < kLocations; ++l)
      locations.push_back({l, names[l]});
    if (all) {
      read = local_defs.read_all(locations, otf2_events);
    } else {
      for (const auto& l : locations) {
        read.push_back(local_defs.read(l.id, std::string(l.name), otf2_events));
        read.back().file = {};
      }
    }
  }
  OTF2_Reader_Close(reader);
  return read;
}

void expect_same(const std::vector<LocalDefinitions>& all,
                 const std::vector<LocalDefinitions>& one) {
  ASSERT_EQ(all.size(), one.size());
  for (std::size_t l = 0; l < all.size(); ++l) {
    SCOPED_TRACE("location " + std::to_string(l));
    EXPECT_EQ(all[l].retimed, one[l].retimed);
    EXPECT_EQ(all[l].by_otf2, one[l].by_otf2);
    EXPECT_EQ(all[l].error, one[l].error);
    EXPECT_EQ(all[l].maps.empty(), one[l].maps.empty());
    EXPECT_EQ(all[l].maps.map(OTF2_MAPPING_REGION, 0), one[l].maps.map(OTF2_MAPPING_REGION, 0));
    EXPECT_TRUE(all[l].file.empty());
  }
}

TEST(LocalDefinitionReader, ReadAllReadsEachLocationAsReadDoes) {
  const Archive a;
  // A location whose file is damaged goes to OTF2's reader, which names it; one without a file is
  // an error (the archive has local definition files).
  std::ofstream(a.def_file(700), std::ios::binary | std::ios::trunc) << std::string(40, '\x17');
  fs::remove(a.def_file(1000));
  for (const Otf2Events otf2_events : {Otf2Events::No, Otf2Events::Maybe}) {
    const std::vector<LocalDefinitions> all = read_archive(a, otf2_events, true);
    expect_same(all, read_archive(a, otf2_events, false));
    EXPECT_EQ(all[4].maps.map(OTF2_MAPPING_REGION, 0), 4u);
    EXPECT_TRUE(all[5].retimed);
    EXPECT_TRUE(all[3].maps.empty());
    EXPECT_FALSE(all[3].retimed);
    EXPECT_NE(all[700].error.find("700.def': corrupt local definition file"), std::string::npos)
        << all[700].error;
    EXPECT_NE(all[1000].error.find("1000.def': missing local definition file"), std::string::npos)
        << all[1000].error;
    // Parsed here unless OTF2's event readers may need the tables.
    EXPECT_EQ(all[4].by_otf2, otf2_events == Otf2Events::Maybe);
    EXPECT_FALSE(all[3].by_otf2);
  }
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  htrace::format::quiet_otf2_errors(); // (the damaged file's diagnostics become its error)
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
