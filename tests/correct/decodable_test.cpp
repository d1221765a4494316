// A location's events are decoded straight from its event file only where OTF2's reader would
// pass them unchanged: not where its local definitions hold mapping tables or clock offsets.
#include "correct/archive_reader.h"
#include "correct/definitions.h"
#include "format/anchor_file.h"
#include "format/otf2_library.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <mpi.h>
#include <otf2/otf2.h>
#include <string>
#include <unistd.h>

namespace {

using namespace htrace::correct;
using namespace htrace::format;
namespace fs = std::filesystem;

constexpr OTF2_LocationRef kPlain = 0, kMapped = 1, kOffset = 2;

void write_archive(const fs::path& dir) {
  OTF2_Archive* ar =
      OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                        OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(ar, nullptr);
  OTF2_Archive_SetFlushCallbacks(ar, &kFlushAlways, nullptr);
  OTF2_Archive_SetSerialCollectiveCallbacks(ar);
  OTF2_Archive_OpenEvtFiles(ar);
  for (OTF2_LocationRef l : {kPlain, kMapped, kOffset}) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(ar, l);
    OTF2_EvtWriter_Enter(w, nullptr, 100, 0);
    OTF2_EvtWriter_Leave(w, nullptr, 200, 0);
    OTF2_Archive_CloseEvtWriter(ar, w);
  }
  OTF2_Archive_CloseEvtFiles(ar);
  OTF2_Archive_OpenDefFiles(ar);
  for (OTF2_LocationRef l : {kPlain, kMapped, kOffset}) {
    OTF2_DefWriter* w = OTF2_Archive_GetDefWriter(ar, l);
    if (l == kMapped) { // local region 0 is global region 1
      const uint32_t to_global[] = {1};
      OTF2_IdMap* map = OTF2_IdMap_CreateFromUint32Array(1, to_global, false);
      EXPECT_EQ(OTF2_DefWriter_WriteMappingTable(w, OTF2_MAPPING_REGION, map), OTF2_SUCCESS);
      OTF2_IdMap_Free(map);
    }
    if (l == kOffset) {
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
  for (OTF2_LocationRef l : {kPlain, kMapped, kOffset}) {
    OTF2_GlobalDefWriter_WriteLocationGroup(g, l, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(g, l, 0, OTF2_LOCATION_TYPE_CPU_THREAD, 2, l);
  }
  ASSERT_EQ(OTF2_Archive_Close(ar), OTF2_SUCCESS);
}

TEST(Decodable, UnlessLocalDefinitionsMoveTheEvents) {
  const fs::path dir = fs::temp_directory_path() / ("htrace_decodable_" + std::to_string(getpid()));
  fs::remove_all(dir);
  write_archive(dir);
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

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  MPI_Finalize();
  return rc;
}
