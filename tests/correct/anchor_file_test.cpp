// The anchor-file check in front of OTF2's loader: an intact anchor passes, and of all damaged
// ones (every bit flipped in turn) none passes that OTF2 chokes on. Without the check, OTF2
// corrupts its heap on a damaged property count and this test crashes.
#include "format/anchor_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <otf2/otf2.h>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using htrace::format::anchor_file_damage;

OTF2_FlushType flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp no_time(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
OTF2_ErrorCode quiet(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char*,
                     va_list) {
  return code;
}

class AnchorFile : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("htrace_anchor_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    OTF2_Archive* ar =
        OTF2_Archive_Open(dir_.c_str(), "traces", OTF2_FILEMODE_WRITE, 256 * 1024, 4 * 1024 * 1024,
                          OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    ASSERT_NE(ar, nullptr);
    const OTF2_FlushCallbacks callbacks = {flush, no_time};
    OTF2_Archive_SetFlushCallbacks(ar, &callbacks, nullptr);
    OTF2_Archive_SetSerialCollectiveCallbacks(ar);
    OTF2_Archive_SetCreator(ar, "anchor test");
    OTF2_Archive_SetProperty(ar, "TEST::A", "first", false);
    OTF2_Archive_SetProperty(ar, "TEST::B", "second", false);
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(ar);
    OTF2_GlobalDefWriter_WriteString(g, 0, "");
    ASSERT_EQ(OTF2_Archive_Close(ar), OTF2_SUCCESS);
    std::ifstream in(anchor(), std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes_.size(), 60u);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string anchor() const { return (dir_ / "traces.otf2").string(); }
  void write(const std::string& bytes) const {
    std::ofstream(anchor(), std::ios::binary | std::ios::trunc) << bytes;
  }
  // Whether OTF2 loads the anchor file (OTF2_Reader_SetSerialCollectiveCallbacks reads it).
  bool otf2_loads() const {
    OTF2_Reader* reader = OTF2_Reader_Open(anchor().c_str());
    if (!reader) return false;
    const bool ok = OTF2_Reader_SetSerialCollectiveCallbacks(reader) == OTF2_SUCCESS;
    OTF2_Reader_Close(reader);
    return ok;
  }

  fs::path dir_;
  std::string bytes_;
};

TEST_F(AnchorFile, IntactPasses) {
  EXPECT_EQ(anchor_file_damage(anchor()), "");
  EXPECT_TRUE(otf2_loads());
}

// Whatever the check lets through, OTF2 loads or refuses cleanly: no crash (this process would
// die), no allocation beyond reason (peak RSS).
TEST_F(AnchorFile, PassesNothingOtf2ChokesOn) {
  const OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(quiet, nullptr);
  size_t cases = 0, refused = 0, refused_by_otf2 = 0;
  for (size_t at = 0; at < bytes_.size(); ++at)
    for (int bit = 0; bit < 8; ++bit) {
      std::string damaged = bytes_;
      damaged[at] = static_cast<char>(damaged[at] ^ (1 << bit));
      write(damaged);
      ++cases;
      if (!anchor_file_damage(anchor()).empty())
        ++refused;
      else if (!otf2_loads())
        ++refused_by_otf2;
    }
  OTF2_Error_RegisterCallback(previous, nullptr);
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  EXPECT_LT(usage.ru_maxrss, 256 * 1024) << "KiB";
  EXPECT_GT(refused, cases / 10); // (the check does refuse damage)
  std::printf("%zu damaged anchor files: %zu refused by the check, %zu then by OTF2\n", cases,
              refused, refused_by_otf2);
}

TEST_F(AnchorFile, BoundsTheCounts) {
  // The property count follows the three strings after the 2 + 5 + 1 + 38 bytes of the header.
  size_t at = 2 + 5 + 1 + 38;
  for (int s = 0; s < 3; ++s)
    at = bytes_.find('\0', at) + 1;
  std::string damaged = bytes_;
  damaged[at + 3] = static_cast<char>(0x80); // 2^31 properties: OTF2's allocation overflows
  write(damaged);
  EXPECT_NE(anchor_file_damage(anchor()).find("invalid property count"), std::string::npos);
  damaged = bytes_;
  damaged[2 + 5 + 1 + 4 + 4] = 0x7f; // an event chunk size of ~2^39 bytes
  write(damaged);
  EXPECT_NE(anchor_file_damage(anchor()).find("invalid event chunk size"), std::string::npos);
  write(bytes_.substr(0, bytes_.rfind('\2'))); // (OTF2 writes 2 bytes after END_OF_FILE)
  EXPECT_NE(anchor_file_damage(anchor()).find("END_OF_FILE"), std::string::npos);
  write("not an anchor");
  EXPECT_NE(anchor_file_damage(anchor()), "");
}

} // namespace
