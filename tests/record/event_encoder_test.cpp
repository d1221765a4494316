// The tracer's own event-file encoder against the OTF2 library: every event type the tracer can
// encode, with distinct field values, must come out byte for byte as OTF2's event writer writes
// it (record ids, singleton and length layout, compressed integers, all-ones values, signed
// fields, timestamp records only where the time changes, chunk header and end of file).
#include "format/event_file_encoder.h"
#include "format/record_tables.h"

// The generated sample writer calls OTF2's deprecated OpenMP records too.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#pragma GCC diagnostic ignored "-Wunused-function"
#include "sample_events.inc"
// (after the sample writer, whose values it uses)
#include "sample_encodes.inc"
#pragma GCC diagnostic pop

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <stdlib.h>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kChunk = 256 << 10;

OTF2_FlushType flush_always(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}
OTF2_TimeStamp no_time(void*, OTF2_FileType, OTF2_LocationRef) {
  return 0;
}
OTF2_FlushCallbacks flush_callbacks = {flush_always, no_time};

std::vector<char> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct TempDir {
  std::string path;
  TempDir() {
    char name[] = "/tmp/htrace-encoder-XXXXXX";
    path = ::mkdtemp(name);
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
};

// Each type twice at one time (the second without a timestamp record), then a new time.
OTF2_TimeStamp time_of(int i) {
  return 0x123456789a + static_cast<OTF2_TimeStamp>(i / 2) * 1000;
}

} // namespace

// OTF2's own writer for location 0 of an archive in `dir`: the reference the encoder must match.
void open_otf2_writer(const std::string& dir, OTF2_Archive*& archive, OTF2_EvtWriter*& writer) {
  archive = OTF2_Archive_Open(dir.c_str(), "traces", OTF2_FILEMODE_WRITE, kChunk, 4 << 20,
                              OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  ASSERT_NE(archive, nullptr);
  ASSERT_EQ(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, nullptr), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_SetSerialCollectiveCallbacks(archive), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_OpenEvtFiles(archive), OTF2_SUCCESS);
  writer = OTF2_Archive_GetEvtWriter(archive, 0);
  ASSERT_NE(writer, nullptr);
}

TEST(EventEncoder, EveryEncodableTypeMatchesOtf2ByteForByte) {
  TempDir dir;
  const int types_known = htrace::format::event_record_type_count();
  std::vector<int> types;
  {
    htrace::format::EventFileEncoder probe; // not opened: every encoder must refuse
    for (int type = 0; type < types_known; ++type)
      if (encode_sample_event(probe, type, 1) == 0)
        types.push_back(type);
      else
        ASSERT_EQ(encode_sample_event(probe, type, 1), -1);
  }
  // The tracer writes these; a generator change that loses one must fail here.
  for (const char* name : {"Enter",
                           "Leave",
                           "MpiSend",
                           "MpiIsend",
                           "MpiIsendComplete",
                           "MpiIrecvRequest",
                           "MpiIrecv",
                           "MpiRecv",
                           "MpiRequestTest",
                           "MpiRequestCancelled",
                           "MpiCollectiveBegin",
                           "MpiCollectiveEnd",
                           "NonBlockingCollectiveRequest",
                           "NonBlockingCollectiveComplete",
                           "RmaWinCreate",
                           "RmaCollectiveEnd",
                           "RmaAtomic",
                           "RmaOpCompleteRemote",
                           "IoSeek",
                           "IoCreateHandle",
                           "ThreadFork",
                           "ThreadTaskSwitch",
                           "BufferFlush",
                           "MeasurementOnOff"}) {
    int type = 0;
    while (type < types_known && std::string(htrace::format::event_record_name(type)) != name)
      ++type;
    ASSERT_LT(type, types_known) << name;
    EXPECT_NE(std::find(types.begin(), types.end(), type), types.end()) << name;
  }

  OTF2_Archive* archive = nullptr;
  OTF2_EvtWriter* writer = nullptr;
  ASSERT_NO_FATAL_FAILURE(open_otf2_writer(dir.path, archive, writer));
  htrace::format::EventFileEncoder encoder;
  const std::string mine = dir.path + "/mine.evt";
  ASSERT_TRUE(encoder.open(mine, kChunk));

  int i = 0;
  for (int type : types)
    for (int repeat = 0; repeat < 2; ++repeat, ++i) {
      ASSERT_EQ(write_sample_event(writer, type, nullptr, time_of(i)), OTF2_SUCCESS)
          << htrace::format::event_record_name(type);
      ASSERT_EQ(encode_sample_event(encoder, type, time_of(i)), 1)
          << htrace::format::event_record_name(type);
    }
  ASSERT_EQ(OTF2_Archive_CloseEvtWriter(archive, writer), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_CloseEvtFiles(archive), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_Close(archive), OTF2_SUCCESS);
  ASSERT_TRUE(encoder.finish());
  EXPECT_FALSE(encoder.finish()); // once only

  const std::vector<char> expected = read_all(dir.path + "/traces/0.evt");
  const std::vector<char> got = read_all(mine);
  ASSERT_GT(expected.size(), 200u);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    ASSERT_EQ(static_cast<int>(got[k]) & 0xff, static_cast<int>(expected[k]) & 0xff)
        << "first difference at byte " << k;
  std::printf("%zu encodable event types, %d events, %zu bytes identical\n", types.size(), i,
              got.size());
}

TEST(EventEncoder, FullChunksAreWrittenWholeAndNumbered) {
  TempDir dir;
  htrace::format::EventFileEncoder encoder;
  const std::string path = dir.path + "/0.evt";
  ASSERT_TRUE(encoder.open(path, kChunk));
  const int n = 100000; // Enter records of 2 to 5 bytes after a 9-byte timestamp: ~5 chunks
  EXPECT_EQ(encoder.file_size(), 18u + 2u); // a chunk header and the end mark
  for (int k = 0; k < n; ++k)
    ASSERT_TRUE(htrace::format::encode_Enter(encoder, 10 + k, static_cast<uint32_t>(k)));
  // What HTRACE_BUDGET counts: the size the file will have, before it is finished.
  const std::uint64_t predicted = encoder.file_size();
  ASSERT_TRUE(encoder.finish());
  EXPECT_EQ(encoder.file_size(), 0u);
  const std::vector<char> bytes = read_all(path);
  EXPECT_EQ(bytes.size(), predicted);
  const std::size_t chunks = (bytes.size() + kChunk - 1) / kChunk;
  ASSERT_GE(chunks, 4u);
  uint64_t expect_first = 1;
  for (std::size_t c = 0; c < chunks; ++c) {
    const char* h = bytes.data() + c * kChunk;
    uint64_t first, last;
    std::memcpy(&first, h + 2, 8);
    std::memcpy(&last, h + 10, 8);
    EXPECT_EQ(h[0], 3); // chunk header
    EXPECT_EQ(first, expect_first);
    EXPECT_GE(last, first);
    expect_first = last + 1;
  }
  EXPECT_EQ(expect_first, static_cast<uint64_t>(n) + 1);
  EXPECT_EQ(bytes[bytes.size() - 2], 2); // END_OF_FILE
}

TEST(EventEncoder, ReportsAnUncreatableFile) {
  htrace::format::EventFileEncoder encoder;
  EXPECT_FALSE(encoder.open("/nonexistent-dir/0.evt", kChunk));
  EXPECT_EQ(encoder.error(), ENOENT);
  EXPECT_FALSE(htrace::format::encode_Enter(encoder, 1, 1));
  EXPECT_FALSE(encoder.finish());
}

// A poll run's Leave: an attribute list of one uint64 value before the event, as OTF2's writer
// encodes it (small, large and all-ones values; a new time and the same time).
TEST(EventEncoder, Uint64AttributeListMatchesOtf2ByteForByte) {
  TempDir dir;
  OTF2_Archive* archive = nullptr;
  OTF2_EvtWriter* writer = nullptr;
  ASSERT_NO_FATAL_FAILURE(open_otf2_writer(dir.path, archive, writer));
  OTF2_AttributeList* list = OTF2_AttributeList_New();
  htrace::format::EventFileEncoder encoder;
  const std::string mine = dir.path + "/mine.evt";
  ASSERT_TRUE(encoder.open(mine, kChunk));

  const std::uint64_t values[] = {1, 240955, 0x123456789abcdefull, UINT64_MAX};
  const std::uint32_t attributes[] = {0, 7, 300, 0};
  for (int i = 0; i < 4; ++i) {
    // Odd i: at the time of the Enter before (no timestamp record of its own).
    const OTF2_TimeStamp t = 0x1000 + static_cast<OTF2_TimeStamp>(i / 2) * 10 + i % 2;
    ASSERT_EQ(OTF2_AttributeList_AddUint64(list, attributes[i], values[i]), OTF2_SUCCESS);
    ASSERT_EQ(OTF2_EvtWriter_Leave(writer, list, t, 42 + i), OTF2_SUCCESS);
    ASSERT_EQ(OTF2_AttributeList_RemoveAllAttributes(list), OTF2_SUCCESS);
    ASSERT_TRUE(encoder.attribute_uint64(t, attributes[i], values[i]));
    ASSERT_TRUE(htrace::format::encode_Leave(encoder, t, 42 + i));
    ASSERT_TRUE(htrace::format::encode_Enter(encoder, t + 1, 5)); // and an event without a list
    ASSERT_EQ(OTF2_EvtWriter_Enter(writer, nullptr, t + 1, 5), OTF2_SUCCESS);
  }
  OTF2_AttributeList_Delete(list);
  ASSERT_EQ(OTF2_Archive_CloseEvtWriter(archive, writer), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_CloseEvtFiles(archive), OTF2_SUCCESS);
  ASSERT_EQ(OTF2_Archive_Close(archive), OTF2_SUCCESS);
  ASSERT_TRUE(encoder.finish());

  const std::vector<char> expected = read_all(dir.path + "/traces/0.evt");
  const std::vector<char> got = read_all(mine);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k)
    ASSERT_EQ(static_cast<int>(got[k]) & 0xff, static_cast<int>(expected[k]) & 0xff)
        << "first difference at byte " << k;
}
