// RequestTable: completion semantics of ordinary and persistent requests, growth, deletion that
// keeps probe chains intact, and concurrent use from several threads.
#include "mpi/request_table.h"

#include <gtest/gtest.h>
#include <random>
#include <thread>
#include <unordered_map>

using htrace::mpi::PendingRequest;
using htrace::mpi::RequestTable;
constexpr RequestTable::Owner kMe = 1;

namespace {
PendingRequest send_to(std::uint32_t peer, std::uint64_t id, bool persistent = false) {
  PendingRequest p;
  p.kind = PendingRequest::Kind::Send;
  p.peer = peer;
  p.id = id;
  p.persistent = persistent;
  p.active = !persistent;
  return p;
}
} // namespace

TEST(RequestTable, CompletionRemovesOrdinaryRequest) {
  RequestTable table;
  table.insert(0x1000, kMe, send_to(3, 7));
  PendingRequest out;
  ASSERT_TRUE(table.complete(0x1000, kMe, out));
  EXPECT_EQ(out.peer, 3u);
  EXPECT_EQ(out.id, 7u);
  EXPECT_FALSE(table.complete(0x1000, kMe, out)) << "a request completes once";
  EXPECT_EQ(table.size(), 0u);
}

TEST(RequestTable, PersistentRequestIsInactiveUntilStarted) {
  RequestTable table;
  table.insert(0x2000, kMe, send_to(1, 0, true));
  PendingRequest out;
  EXPECT_FALSE(table.complete(0x2000, kMe, out)) << "inactive: waiting on it records nothing";
  ASSERT_TRUE(table.start(0x2000, kMe, 11, out));
  EXPECT_EQ(out.id, 11u);
  ASSERT_TRUE(table.complete(0x2000, kMe, out));
  EXPECT_EQ(out.id, 11u);
  EXPECT_EQ(table.size(), 1u) << "persistent requests stay until MPI_Request_free";
  EXPECT_FALSE(table.complete(0x2000, kMe, out));
  ASSERT_TRUE(table.start(0x2000, kMe, 12, out));
  ASSERT_TRUE(table.complete(0x2000, kMe, out));
  EXPECT_EQ(out.id, 12u) << "every start is a new communication";
  EXPECT_TRUE(table.erase(0x2000, kMe));
  EXPECT_FALSE(table.start(0x2000, kMe, 13, out));
}

TEST(RequestTable, CancelFlagTravelsToCompletionAndIsResetByStart) {
  RequestTable table;
  table.insert(0x3000, kMe, send_to(0, 1, true));
  PendingRequest out;
  table.start(0x3000, kMe, 2, out);
  ASSERT_TRUE(table.mark_cancelled(0x3000, kMe));
  ASSERT_TRUE(table.complete(0x3000, kMe, out));
  EXPECT_TRUE(out.cancel_requested);
  table.start(0x3000, kMe, 3, out);
  EXPECT_FALSE(out.cancel_requested);
  EXPECT_FALSE(table.mark_cancelled(0x9999, kMe));
}

// Many keys with deletions in random order, checked against std::unordered_map: exercises growth
// and backward-shift deletion across wrap-around.
TEST(RequestTable, MatchesReferenceMapUnderRandomInsertAndErase) {
  RequestTable table(8);
  std::unordered_map<std::uint64_t, std::uint64_t> reference;
  std::mt19937_64 rng(42);
  for (int step = 0; step < 200000; ++step) {
    const std::uint64_t key = 1 + (rng() % 5000) * 16; // pointer-like: low bits zero
    if (rng() % 3 != 0 && reference.count(key) == 0) {
      table.insert(key, kMe, send_to(0, key * 3));
      reference[key] = key * 3;
    } else {
      EXPECT_EQ(table.erase(key, kMe), reference.erase(key) == 1);
    }
  }
  EXPECT_EQ(table.size(), reference.size());
  for (const auto& [key, id] : reference) {
    PendingRequest out;
    ASSERT_TRUE(table.find(key, kMe, out)) << key;
    EXPECT_EQ(out.id, id);
  }
}

TEST(RequestTable, ConcurrentThreadsKeepTheirOwnRequests) {
  RequestTable table;
  constexpr int kThreads = 4, kRounds = 50000;
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRounds; ++i) {
        const std::uint64_t key =
            (static_cast<std::uint64_t>(t) << 40) | (static_cast<std::uint64_t>(i % 64 + 1) << 4);
        const auto me = RequestTable::current_owner();
        table.insert(key, me,
                     send_to(static_cast<std::uint32_t>(t), static_cast<std::uint64_t>(i)));
        PendingRequest out;
        if (!table.complete(key, me, out) || out.peer != static_cast<std::uint32_t>(t) ||
            out.id != static_cast<std::uint64_t>(i))
          ++errors;
      }
    });
  }
  for (auto& th : threads)
    th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(table.size(), 0u);
}

// MPI_THREAD_MULTIPLE: thread A's request completes inside MPI and its handle is handed to thread
// B's next Isend before A has looked the completion up. Both entries must survive and each
// thread must get its own.
TEST(RequestTable, HandleReusedByAnotherThreadBeforeCompletionIsLookedUp) {
  RequestTable table;
  constexpr RequestTable::Owner kA = 10, kB = 11;
  table.insert(0x5000, kA, send_to(1, 100));
  table.insert(0x5000, kB, send_to(2, 200)); // same handle, other thread
  PendingRequest out;
  ASSERT_TRUE(table.complete(0x5000, kA, out));
  EXPECT_EQ(out.id, 100u);
  ASSERT_TRUE(table.complete(0x5000, kB, out));
  EXPECT_EQ(out.id, 200u);
  // A completion by a third thread (requests may be waited on anywhere) takes the oldest entry.
  table.insert(0x6000, kA, send_to(1, 1));
  table.insert(0x6000, kB, send_to(1, 2));
  ASSERT_TRUE(table.complete(0x6000, 99, out));
  EXPECT_EQ(out.id, 1u);
  EXPECT_EQ(table.size(), 1u);
}

// Open MPI hands out one shared, already-completed request for Isends that finished at once: two
// outstanding Isends of one thread can have the same handle. Each completion takes one, in order.
TEST(RequestTable, SameHandleTwiceFromOneThreadCompletesInOrder) {
  RequestTable table;
  table.insert(0x7000, kMe, send_to(1, 5));
  table.insert(0x7000, kMe, send_to(1, 6));
  EXPECT_EQ(table.size(), 2u);
  PendingRequest out;
  ASSERT_TRUE(table.complete(0x7000, kMe, out));
  EXPECT_EQ(out.id, 5u);
  ASSERT_TRUE(table.complete(0x7000, kMe, out));
  EXPECT_EQ(out.id, 6u);
  EXPECT_FALSE(table.complete(0x7000, kMe, out));
}
