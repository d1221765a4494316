#include "common/region_filter.h"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace {

using htrace::parse_region_filter;

TEST(RegionFilter, TheLastMatchingRuleWins) {
  const auto r = parse_region_filter(R"(# what a Score-P user keeps
SCOREP_REGION_NAMES_BEGIN
  EXCLUDE MPI_*            # everything MPI ...
  INCLUDE MPI_S?nd MPI_*recv
          MPI_Barrier      # ... but these: a rule runs on over lines
  EXCLUDE MANGLED MPI_Sendrecv
SCOREP_REGION_NAMES_END
)");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.filter.rules().size(), 5u);
  EXPECT_TRUE(r.filter.excludes("MPI_Test"));
  EXPECT_FALSE(r.filter.excludes("MPI_Send"));
  EXPECT_FALSE(r.filter.excludes("MPI_Irecv"));
  EXPECT_FALSE(r.filter.excludes("MPI_Barrier"));
  EXPECT_TRUE(r.filter.excludes("MPI_Sendrecv"));
  EXPECT_FALSE(r.filter.excludes("main")) << "a name no rule matches is included";
}

TEST(RegionFilter, NamesMatchCaseSensitivelyWithShellWildcards) {
  const auto r = parse_region_filter("SCOREP_REGION_NAMES_BEGIN EXCLUDE MPI_Test[as][lo]* "
                                     "MPI_?probe SCOREP_REGION_NAMES_END");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.filter.excludes("MPI_Testall"));
  EXPECT_TRUE(r.filter.excludes("MPI_Testsome"));
  EXPECT_FALSE(r.filter.excludes("MPI_Test"));
  EXPECT_FALSE(r.filter.excludes("MPI_Testany"));
  EXPECT_TRUE(r.filter.excludes("MPI_Iprobe"));
  EXPECT_TRUE(r.filter.excludes("MPI_Mprobe"));
  EXPECT_FALSE(r.filter.excludes("MPI_Improbe"));
  EXPECT_FALSE(r.filter.excludes("MPI_IPROBE"));
}

TEST(RegionFilter, FileNameRulesAreCountedNotApplied) {
  const auto r = parse_region_filter("SCOREP_FILE_NAMES_BEGIN\n EXCLUDE */lib/* *.f90\n"
                                     "SCOREP_FILE_NAMES_END\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.filter.file_rules(), 2);
  EXPECT_TRUE(r.filter.rules().empty());
  EXPECT_FALSE(r.filter.excludes("MPI_Send"));
}

TEST(RegionFilter, AnEmptyFileSelectsEverything) {
  const auto r = parse_region_filter("# nothing\n\n");
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_FALSE(r.filter.excludes("MPI_Send"));
}

TEST(RegionFilter, MalformedFilesNameTheLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"EXCLUDE MPI_Send\n",
       "line 1: 'EXCLUDE' outside a SCOREP_REGION_NAMES or SCOREP_FILE_NAMES"},
      {"SCOREP_REGION_NAMES_BEGIN\n\n  MPI_Send\n", "line 3: pattern 'MPI_Send' before EXCLUDE"},
      {"SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\nSCOREP_REGION_NAMES_END\n",
       "line 2: EXCLUDE without a name pattern"},
      {"SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n  INCLUDE MPI_Send\nSCOREP_REGION_NAMES_END\n",
       "line 2: EXCLUDE without a name pattern"},
      {"# x\nSCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Send\n",
       "line 2: SCOREP_REGION_NAMES_BEGIN without its END"},
      {"SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_BEGIN\n",
       "line 2: SCOREP_FILE_NAMES_BEGIN inside another block"},
      {"SCOREP_REGION_NAMES_BEGIN\nSCOREP_FILE_NAMES_END\n",
       "line 2: SCOREP_FILE_NAMES_END without SCOREP_FILE_NAMES_BEGIN"},
      {"SCOREP_REGION_NAMES_BEGIN\n EXCLUDE MPI_Send MANGLED\nSCOREP_REGION_NAMES_END",
       "line 2: MANGLED not right after EXCLUDE or INCLUDE"},
      {"SCOREP_REGION_NAMES_END\n", "line 1: SCOREP_REGION_NAMES_END without "},
  };
  for (const auto& [text, error] : cases) {
    const auto r = parse_region_filter(text);
    EXPECT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error.rfind(error, 0), 0u) << "got '" << r.error << "' for:\n" << text;
  }
}

TEST(RegionFilter, UnreadableFilesSayWhy) {
  EXPECT_EQ(htrace::read_region_filter("/nonexistent/x.filter").error,
            "cannot be read: No such file or directory");
  EXPECT_EQ(htrace::read_region_filter("/").error, "cannot be read: not a regular file");
  char path[] = "/tmp/htrace-filter-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "SCOREP_REGION_NAMES_BEGIN\nEXCLUDE MPI_Test\nSCOREP_REGION_NAMES_END\n";
  const auto r = htrace::read_region_filter(path);
  std::remove(path);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_TRUE(r.filter.excludes("MPI_Test"));
}

} // namespace
