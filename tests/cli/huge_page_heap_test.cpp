// The tools' restart with a huge-page heap (tools/common/huge_page_heap.h): the decision, and on
// a machine where it applies, that this test program, restarted the same way, gets malloc memory
// the kernel may back with huge pages.
#include "huge_page_heap.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <memory>
#include <sstream>
#include <string>

namespace {

using htrace::tools::huge_page_tunables;

const std::string kMadvise = "always [madvise] never";

TEST(HugePageTunables, AsksForHugePages) {
  EXPECT_EQ(huge_page_tunables(nullptr, kMadvise, "2.36"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables("", kMadvise, "2.35"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables(nullptr, kMadvise, "3.0"), "glibc.malloc.hugetlb=1");
}

TEST(HugePageTunables, KeepsTheOtherTunables) {
  EXPECT_EQ(huge_page_tunables("glibc.malloc.tcache_count=0", kMadvise, "2.36"),
            "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1");
}

TEST(HugePageTunables, LeavesTheUsersChoiceAndItsOwnRestart) {
  EXPECT_EQ(huge_page_tunables("glibc.malloc.hugetlb=0", kMadvise, "2.36"), std::nullopt);
  EXPECT_EQ(huge_page_tunables("a=1:glibc.malloc.hugetlb=1", kMadvise, "2.36"), std::nullopt);
}

TEST(HugePageTunables, OnlyWhereTheKernelWaitsToBeAsked) {
  EXPECT_EQ(huge_page_tunables(nullptr, "[always] madvise never", "2.36"), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, "always madvise [never]", "2.36"), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, "", "2.36"), std::nullopt); // no such file
}

TEST(HugePageTunables, OnlyWhereGlibcKnowsTheTunable) {
  EXPECT_EQ(huge_page_tunables(nullptr, kMadvise, "2.34"), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, kMadvise, "1.99"), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, kMadvise, "unknown"), std::nullopt);
}

// The "THPeligible" field of the mapping in /proc/self/smaps that holds `address`, or -1.
int huge_page_eligible(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-') inside = begin <= at && at < end;
    if (inside && line.rfind("THPeligible:", 0) == 0) return std::atoi(line.c_str() + 12);
  }
  return -1;
}

TEST(HugePageHeap, RestartedProgramsMallocMayUseHugePages) {
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(file, mode);
  if (!huge_page_tunables(nullptr, mode, gnu_get_libc_version()))
    GTEST_SKIP() << "huge pages are not asked for here (kernel mode '" << mode << "', glibc "
                 << gnu_get_libc_version() << ")";
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  ASSERT_NE(tunables, nullptr);
  EXPECT_NE(std::strstr(tunables, "glibc.malloc.hugetlb=1"), nullptr) << tunables;
  // Beyond malloc's mmap threshold: a mapping of its own, advised (or not) by malloc.
  const size_t size = size_t(64) << 20;
  std::unique_ptr<char[]> block(new char[size]);
  std::memset(block.get(), 1, size);
  EXPECT_EQ(huge_page_eligible(block.get() + size / 2), 1);
}

} // namespace

int main(int argc, char** argv) {
  htrace::tools::use_huge_page_heap(argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
