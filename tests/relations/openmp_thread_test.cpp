#include "relations/openmp_thread.h"

#include <gtest/gtest.h>
#include <vector>

namespace htrace::relations {
namespace {

struct Link {
  Event event;
  Role role;
  LocalKey key;
};
bool operator==(const LocalKey& a, const LocalKey& b) {
  return a.sub == b.sub && a.a == b.a && a.b == b.b && a.c == b.c;
}

struct Collect {
  std::vector<Link>* out;
  void operator()(Event e, Role r, const LocalKey& k) const { out->push_back({e, r, k}); }
};

format::RegionClass sync(format::RegionClass::Sync s) {
  format::RegionClass c;
  c.sync = s;
  return c;
}

TEST(OpenMpThread, ForkTeamJoin) {
  std::vector<Link> master_links, worker_links;
  OpenMpThread master(0), worker(1);
  master.fork(1, Collect{&master_links});
  master.team_begin(2, 5, Collect{&master_links});
  worker.team_begin(3, 5, Collect{&worker_links});
  worker.team_end(4, 5, Collect{&worker_links});
  master.team_end(5, 5, Collect{&master_links});
  master.join(6, Collect{&master_links});
  const LocalKey fork{LocalSub::Fork, 5, 0, 0}, join{LocalSub::Join, 5, 0, 0};
  ASSERT_EQ(master_links.size(), 2u);
  EXPECT_EQ(master_links[0].event, 1); // the fork contributes, at the master's team begin
  EXPECT_EQ(master_links[0].role, Role::Contribute);
  EXPECT_TRUE(master_links[0].key == fork);
  EXPECT_EQ(master_links[1].event, 6);
  EXPECT_EQ(master_links[1].role, Role::Receive);
  EXPECT_TRUE(master_links[1].key == join);
  ASSERT_EQ(worker_links.size(), 2u);
  EXPECT_EQ(worker_links[0].role, Role::Receive);
  EXPECT_TRUE(worker_links[0].key == fork);
  EXPECT_EQ(worker_links[1].role, Role::Contribute);
  EXPECT_TRUE(worker_links[1].key == join);
}

TEST(OpenMpThread, BarrierCountsTaskCompletionsInside) {
  using Sync = format::RegionClass::Sync;
  std::vector<Link> links;
  OpenMpThread t(1);
  t.team_begin(1, 5, Collect{&links});
  t.enter(2, sync(Sync::Barrier), Collect{&links});
  t.task_complete(3, Collect{&links});
  t.leave(4, Collect{&links});
  t.enter(5, sync(Sync::Barrier), Collect{&links});
  t.leave(6, Collect{&links});
  const LocalKey first{LocalSub::Barrier, 5, 0, 0}, second{LocalSub::Barrier, 5, 0, 1};
  ASSERT_EQ(links.size(), 6u);
  EXPECT_TRUE(links[1].key == first && links[1].role == Role::Contribute);
  EXPECT_TRUE(links[2].key == first && links[2].role == Role::Contribute && links[2].event == 3);
  EXPECT_TRUE(links[3].key == first && links[3].role == Role::Receive);
  EXPECT_TRUE(links[4].key == second && links[5].key == second);
}

TEST(OpenMpThread, TaskwaitAndTaskgroupOfACreatedTask) {
  using Sync = format::RegionClass::Sync;
  std::vector<Link> links;
  OpenMpThread t(1);
  t.team_begin(1, 5, Collect{&links});
  const TaskKey implicit = implicit_task(5, 1, 0);
  t.enter(2, sync(Sync::Taskgroup), Collect{&links});
  const TaskCreation c = t.task_create(3, 5, 1, 1, Collect{&links});
  EXPECT_TRUE(c.in_group);
  EXPECT_TRUE(c.parent == implicit);
  EXPECT_TRUE(c.wait_key() == task_wait_key(LocalSub::Taskwait, implicit, 0));
  t.enter(4, sync(Sync::Taskwait), Collect{&links});
  t.leave(5, Collect{&links});
  t.leave(6, Collect{&links});
  ASSERT_EQ(links.size(), 4u);
  EXPECT_TRUE(links[1].key == (LocalKey{LocalSub::Task, 5, 1, 1}));
  EXPECT_TRUE(links[2].key == c.wait_key() && links[2].role == Role::Receive);
  EXPECT_TRUE(links[3].key == c.group.key() && links[3].role == Role::Receive);
}

TEST(OpenMpThread, LockReleaseHandsOverToTheNextAcquisition) {
  std::vector<Link> links;
  OpenMpThread t(1);
  t.lock_release(1, 7, 3, 4, Collect{&links});
  t.lock_acquire(2, 7, 3, 5, Collect{&links});
  ASSERT_EQ(links.size(), 2u);
  EXPECT_TRUE(links[0].key == links[1].key);
  EXPECT_EQ(links[0].role, Role::Contribute);
}

} // namespace
} // namespace htrace::relations
