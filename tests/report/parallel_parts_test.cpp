// format::run_in_parts, which opens and reads thousands of per-location files on threads: every
// item in exactly one part, in contiguous ranges in part order, and of several failing parts the
// lowest one's error, after every part has finished.
#include "format/parallel_parts.h"

#include <atomic>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using htrace::format::run_in_parts;

TEST(ParallelParts, EveryItemOnceInContiguousRangesInPartOrder) {
  for (const std::size_t items : {0u, 3u, 10u, 1001u})
    for (const std::size_t parts : {1u, 2u, 4u, 5u}) {
      SCOPED_TRACE(std::to_string(items) + " items, " + std::to_string(parts) + " parts");
      std::vector<int> part_of(items, -1);
      std::vector<std::size_t> begins(parts), ends(parts);
      run_in_parts(items, parts, [&](std::size_t part, std::size_t begin, std::size_t end) {
        begins[part] = begin;
        ends[part] = end;
        for (std::size_t i = begin; i < end; ++i)
          part_of[i] = part_of[i] == -1 ? static_cast<int>(part) : -2;
      });
      for (std::size_t i = 0; i < items; ++i)
        EXPECT_GE(part_of[i], 0) << "item " << i << " in no part or in two";
      EXPECT_EQ(begins[0], 0u);
      EXPECT_EQ(ends[parts - 1], items);
      for (std::size_t p = 1; p < parts; ++p)
        EXPECT_EQ(begins[p], ends[p - 1]);
    }
}

TEST(ParallelParts, TheLowestFailingPartsErrorAfterEveryPartHasRun) {
  std::atomic<int> finished{0};
  try {
    run_in_parts(40, 4, [&](std::size_t part, std::size_t, std::size_t) {
      ++finished;
      if (part == 1 || part == 3) throw std::runtime_error("part " + std::to_string(part));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "part 1");
  }
  EXPECT_EQ(finished.load(), 4);
}

} // namespace
