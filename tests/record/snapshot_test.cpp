// The salvage snapshot's byte format (libtrace/record/snapshot.h): what a rank writes is what
// htrace-salvage reads back, its windows and MPI-IO definitions included; a file of the format
// before those (version 2) still reads, without them; damage is refused with a reason.
#include "record/snapshot.h"

#include <gtest/gtest.h>

namespace {

using namespace htrace::record;

snapshot::RankSnapshot sample() {
  snapshot::RankSnapshot s;
  s.world_size = 4;
  s.start_realtime_ns = 1764000000123456789;
  s.start_global_ns = 987654321;
  s.event_chunk_size = 256 << 10;
  s.defs.rank = 2;
  s.defs.host = "node7";
  s.defs.locations.push_back({(LocationId{1} << 32) | 2, 0, INT64_MAX, INT64_MIN});
  s.defs.regions.push_back({"MPI_Put", Paradigm::Mpi, RegionRole::Function});
  s.archive_properties = {{"HTRACE::CLOCK::TIMEBASE", "global"}};
  s.rma_io.windows = {{"salvage window", 0}};
  s.rma_io.groups = {{0, 2, 3}};
  s.rma_io.files = {"/scratch/io.dat"};
  s.rma_io.handles = {{"/scratch/io.dat", 0, 0}};
  return s;
}

TEST(Snapshot, ReadsBackWhatWasWritten) {
  const snapshot::RankSnapshot in = sample();
  snapshot::RankSnapshot out;
  std::string error;
  ASSERT_TRUE(snapshot::decode(snapshot::encode(in), out, error)) << error;
  EXPECT_EQ(out.world_size, 4);
  EXPECT_EQ(out.start_realtime_ns, in.start_realtime_ns);
  EXPECT_EQ(out.start_global_ns, in.start_global_ns);
  EXPECT_EQ(out.event_chunk_size, in.event_chunk_size);
  EXPECT_EQ(out.defs.rank, 2);
  EXPECT_EQ(out.defs.host, "node7");
  ASSERT_EQ(out.defs.locations.size(), 1u);
  EXPECT_EQ(out.defs.locations[0].id, in.defs.locations[0].id);
  ASSERT_EQ(out.defs.regions.size(), 1u);
  EXPECT_EQ(out.defs.regions[0].name, "MPI_Put");
  EXPECT_EQ(out.archive_properties, in.archive_properties);
  ASSERT_EQ(out.rma_io.windows.size(), 1u);
  EXPECT_EQ(out.rma_io.windows[0].name, "salvage window");
  EXPECT_EQ(out.rma_io.windows[0].comm, 0u);
  EXPECT_EQ(out.rma_io.groups, in.rma_io.groups);
  EXPECT_EQ(out.rma_io.files, in.rma_io.files);
  ASSERT_EQ(out.rma_io.handles.size(), 1u);
  EXPECT_EQ(out.rma_io.handles[0].name, "/scratch/io.dat");
  EXPECT_EQ(out.rma_io.handles[0].file, 0u);
}

TEST(Snapshot, VersionTwoReadsWithoutWindowsAndFiles) {
  snapshot::RankSnapshot in = sample();
  in.rma_io = {};
  std::string bytes = snapshot::encode(in);
  // Version 2 had no window section at its end (a length of 8 bytes, then the section).
  const std::string empty_part = serialize(RmaIoPart{});
  bytes.resize(bytes.size() - 8 - empty_part.size());
  bytes.replace(0, bytes.find('\n') + 1, "htrace-salvage-2\n");
  snapshot::RankSnapshot out;
  std::string error;
  ASSERT_TRUE(snapshot::decode(bytes, out, error)) << error;
  EXPECT_EQ(out.defs.host, "node7");
  EXPECT_TRUE(out.rma_io.windows.empty() && out.rma_io.files.empty());
}

TEST(Snapshot, RefusesDamage) {
  const std::string bytes = snapshot::encode(sample());
  snapshot::RankSnapshot out;
  std::string error;
  EXPECT_FALSE(snapshot::decode(bytes.substr(0, bytes.size() - 3), out, error));
  EXPECT_EQ(error, "truncated or corrupt");
  EXPECT_FALSE(snapshot::decode(bytes + "x", out, error));
  EXPECT_FALSE(snapshot::decode("htrace-salvage-9\n" + bytes.substr(17), out, error));
  EXPECT_EQ(error, "not an htrace salvage file");
}

} // namespace
