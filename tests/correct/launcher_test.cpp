// htrace-correct initializes MPI only when a launcher started several processes.
#include "correct/launcher.h"

#include <gtest/gtest.h>
#include <map>
#include <string>

using htrace::correct::several_processes;

namespace {

bool several(const std::map<std::string, std::string>& env) {
  return several_processes([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Launcher, NoLauncherIsSerial) {
  EXPECT_FALSE(several({}));
  EXPECT_FALSE(several({{"PATH", "/usr/bin"}, {"SLURM_JOB_ID", "7"}}));
}

TEST(Launcher, ASizeAboveOneMeansMpi) {
  EXPECT_TRUE(several({{"OMPI_COMM_WORLD_SIZE", "2"}, {"OMPI_COMM_WORLD_RANK", "0"}}));
  EXPECT_TRUE(several({{"PMI_SIZE", "4"}, {"PMI_RANK", "3"}}));
  EXPECT_TRUE(several({{"MPI_LOCALNRANKS", "2"}}));
  EXPECT_TRUE(several({{"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_PROCID", "0"}}));
  // One variable says 1, another more (e.g. one process per node on two nodes).
  EXPECT_TRUE(several({{"MPI_LOCALNRANKS", "1"}, {"PMI_SIZE", "2"}}));
}

TEST(Launcher, ASizeOfOneIsSerial) {
  EXPECT_FALSE(several({{"OMPI_COMM_WORLD_SIZE", "1"}, {"PMIX_RANK", "0"}}));
  EXPECT_FALSE(several({{"PMI_SIZE", "1"}, {"PMI_RANK", "0"}}));
  EXPECT_FALSE(several({{"SLURM_STEP_NUM_TASKS", "1"}, {"SLURM_PROCID", "0"}}));
}

TEST(Launcher, ARankWithoutASizeMeansMpi) {
  EXPECT_TRUE(several({{"PMIX_RANK", "0"}}));
  EXPECT_TRUE(several({{"PMI_RANK", "1"}}));
  EXPECT_TRUE(several({{"SLURM_PROCID", "0"}}));
}

TEST(Launcher, AnUnreadableSizeMeansMpi) {
  EXPECT_TRUE(several({{"OMPI_COMM_WORLD_SIZE", ""}}));
  EXPECT_TRUE(several({{"PMI_SIZE", "two"}}));
  EXPECT_TRUE(several({{"PMI_SIZE", "1x"}}));
}

} // namespace
