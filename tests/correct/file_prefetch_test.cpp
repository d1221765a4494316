// FilePrefetch hands the reader each file's bytes as MappedFile would, in order, whatever the
// reader skips, reads ahead and gives up: a large, missing or empty file is the reader's own
// open, with its error. FileCreateAhead hands the writer each file created, and closes what it
// created for nobody.
#include "format/event_file.h"
#include "format/file_prefetch.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;
using htrace::format::FileCreateAhead;
using htrace::format::FilePrefetch;
using htrace::format::MappedFile;

class Prefetch : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("htrace_prefetch_test_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // File `name` holding `size` bytes that say which file and offset they are.
  std::string make(const std::string& name, size_t size) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    for (size_t i = 0; i < size; ++i)
      out.put(static_cast<char>((i * 7 + name.size() * 13 + name[0]) & 0xff));
    return path;
  }
  static std::string bytes(const MappedFile& f) {
    return std::string(reinterpret_cast<const char*>(f.data()), f.size());
  }

  fs::path dir_;
};

TEST_F(Prefetch, GivesEachFileAsMappedFileDoes) {
  std::vector<std::string> paths;
  for (int i = 0; i < 100; ++i)
    paths.push_back(make("f" + std::to_string(i), static_cast<size_t>(1 + i * 37)));
  paths.push_back(make("large", MappedFile::kSmallFile + 1)); // mapped by the reader
  FilePrefetch files(paths, 4);
  for (size_t i = 0; i < paths.size(); ++i) {
    const MappedFile got = files.take(i);
    EXPECT_EQ(bytes(got), bytes(MappedFile(paths[i]))) << paths[i];
    EXPECT_EQ(got.mapped(), i == paths.size() - 1) << paths[i];
  }
  EXPECT_THROW(files.take(paths.size()), std::out_of_range);
}

TEST_F(Prefetch, SkippedAndUnwantedFiles) {
  const std::vector<std::string> paths = {make("a", 10), "", make("b", 20), make("c", 30),
                                          make("d", 40)};
  FilePrefetch files(paths, 1);
  EXPECT_EQ(bytes(files.take(0)), bytes(MappedFile(paths[0])));
  EXPECT_EQ(bytes(files.take(3)), bytes(MappedFile(paths[3]))); // 1 and 2 passed over
  EXPECT_EQ(files.take(4).size(), 40u);
}

TEST_F(Prefetch, MissingAndEmptyFilesAreTheReadersOwnOpen) {
  const std::string missing = (dir_ / "missing").string();
  const std::vector<std::string> paths = {missing, make("empty", 0), make("e", 5)};
  FilePrefetch files(paths);
  try {
    files.take(0);
    ADD_FAILURE() << "a missing file must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  EXPECT_EQ(files.take(1).size(), 0u);
  EXPECT_EQ(files.take(2).size(), 5u);
}

TEST_F(Prefetch, ReaderMayStopEarly) {
  std::vector<std::string> paths;
  for (int i = 0; i < 1000; ++i)
    paths.push_back(make("g" + std::to_string(i), 100));
  for (int stop = 0; stop < 3; ++stop) {
    FilePrefetch files(paths, 2);
    if (stop > 0) files.take(static_cast<size_t>(stop * 10));
  } // destroyed with the thread waiting for room, or still reading: joins, no hang
}

size_t open_descriptors() {
  return static_cast<size_t>(
      std::distance(fs::directory_iterator("/proc/self/fd"), fs::directory_iterator()));
}

TEST_F(Prefetch, CreatesEachFileAhead) {
  const size_t before = open_descriptors();
  std::vector<std::string> paths;
  for (int i = 0; i < 50; ++i)
    paths.push_back(i % 7 == 3 ? "" : (dir_ / ("out" + std::to_string(i))).string());
  paths.push_back((dir_ / "no-such-dir" / "out").string());
  {
    FileCreateAhead files(paths, 4);
    for (size_t i = 0; i < paths.size(); i += 2) { // the odd ones passed over
      const int fd = files.take(i);
      if (paths[i].empty() || i == paths.size() - 1) {
        EXPECT_EQ(fd, -1) << i;
        continue;
      }
      ASSERT_GE(fd, 0) << paths[i];
      ASSERT_EQ(::write(fd, "x", 1), 1);
      ::close(fd);
      EXPECT_EQ(fs::file_size(paths[i]), 1u) << paths[i];
    }
  }
  EXPECT_EQ(open_descriptors(), before) << "files created for nobody are closed";
}

} // namespace
