// Clock-condition violations of collective operations and OpenMP hand-overs, counted on the
// archive's timestamps as they are stored (no clock model applied), with htrace-correct's logical
// messages (correct/README.md) and zero minimum latency: an event on the receiving side violates
// the clock condition when it is earlier than the latest event it depends on.
//  - collectives (blocking: MpiCollectiveBegin -> End; non-blocking: request -> completion),
//    matched per communicator in each process's begin order: barrier, all-to-all kinds and
//    communicator creation: every end after every other process's begin; bcast/scatter[v]:
//    non-root ends after the root's begin; reduce/gather[v]: the root's end after every other
//    begin; scan/exscan: end of rank r after the begins of ranks < r. Ends that receive no data
//    wait for nobody (except barrier and creation); communicator destruction and neighbourhood
//    collectives carry no relation;
//  - OpenMP: fork -> every other member's team begin; members' team ends -> join; barriers
//    (every member's leave after every other member's enter, task completions inside count as
//    enters); lock release with order n -> the acquisition with order n + 1 on another thread;
//    task creation -> every switch to the task; children's completions -> the exit of their
//    parent's next taskwait; completions of tasks created in a taskgroup (or descended from
//    one) -> the taskgroup's exit.
// Counted per receiving event that has a bound, like htrace-correct's `messages` and
// `violations_before`: `htrace-correct --check --no-presync --lmin-intra 0 --lmin-inter 0
// --lmin-omp 0 ARCHIVE` reports the same numbers. A task's switches are taken to be recorded before
// its completion (threads of one process share a clock). Memory: the collectives and OpenMP
// hand-overs whose members have not all been seen yet and the tasks not yet completed, never one
// entry per event.
#pragma once

#include "archive_defs.h"
#include "event_scan.h"
#include "relations/collective_bounds.h"
#include "relations/collective_calls.h"
#include "relations/member_ranks.h"
#include "relations/openmp_thread.h"
#include "relations/ref_index.h"

#include <map>
#include <tuple>
#include <vector>

namespace htrace::report {

struct ConditionCounts {
  std::uint64_t messages = 0;   ///< receiving events with a bound
  std::uint64_t violations = 0; ///< of those, earlier than their bound
  std::int64_t worst_ns = 0;    ///< largest bound - time among the violations
};

class ClockConditions final : public EventSink {
public:
  explicit ClockConditions(const ArchiveDefs& defs);
  void prefetch(std::uint32_t loc) override;
  void enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) override;
  void collective(std::uint32_t loc, std::uint64_t t, std::uint8_t op, std::uint32_t comm,
                  std::uint32_t root, std::uint64_t sent, std::uint64_t received) override;
  void collective_begin(std::uint32_t loc, std::uint64_t t) override;
  void nbc_request(std::uint32_t loc, std::uint64_t t, std::uint64_t request) override;
  void nbc_complete(std::uint32_t loc, std::uint64_t t, std::uint8_t op, std::uint32_t comm,
                    std::uint32_t root, std::uint64_t sent, std::uint64_t received,
                    std::uint64_t request) override;
  void thread_fork(std::uint32_t loc, std::uint64_t t) override;
  void thread_join(std::uint32_t loc, std::uint64_t t) override;
  void team_begin(std::uint32_t loc, std::uint64_t t, std::uint32_t team) override;
  void team_end(std::uint32_t loc, std::uint64_t t, std::uint32_t team) override;
  void lock_acquire(std::uint32_t loc, std::uint64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order) override;
  void lock_release(std::uint32_t loc, std::uint64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order) override;
  void task_create(std::uint32_t loc, std::uint64_t t, std::uint32_t team, std::uint32_t creator,
                   std::uint32_t generation) override;
  void task_switch(std::uint32_t loc, std::uint64_t t, std::uint32_t team, std::uint32_t creator,
                   std::uint32_t generation) override;
  void task_complete(std::uint32_t loc, std::uint64_t t, std::uint32_t team, std::uint32_t creator,
                     std::uint32_t generation) override;
  void finish() override;

  ConditionCounts collectives, openmp;      ///< valid after finish()
  std::uint64_t incomplete_collectives = 0; ///< instances some member never reached (salvage)

private:
  static constexpr std::int64_t kNone = relations::kNoTime;

  struct Member {
    std::int64_t end = kNone;
    bool waits = false, seen = false;
  };
  struct CollInstance {
    relations::CollectiveBounds begins; ///< the members' begins as recorded (input times)
    std::uint32_t ended = 0;
    std::vector<Member> members; ///< by communicator rank
  };
  // OpenMP hand-overs inside one process (relations::OpenMpThread's keys) and their events.
  using LocalKey = std::pair<std::uint32_t, relations::LocalKey>; ///< process, relation
  struct LocalChannel {
    std::vector<std::pair<std::uint32_t, std::int64_t>> contributions, receivers;
    std::uint64_t children = 0; ///< Taskwait, Taskgroup: tasks created for it
    bool completed = false;     ///< Task: the task completed
  };
  using TaskKey = relations::TaskKey;
  /// What an enter and a leave read first (the OpenMP thread's own first cache line): prefetch()
  /// fetches up to there.
  struct Thread {
    explicit Thread(std::uint32_t loc) : omp(loc) {}
    std::uint32_t last_entered = UINT32_MAX;
    relations::OpenMpThread omp;
    relations::CollectiveCalls colls; ///< times in ns
  };
  /// Hands the relations a thread's OpenMP events take part in to contribute() and receive().
  struct Emit {
    ClockConditions& cc;
    std::uint32_t loc;
    void operator()(relations::Event t, relations::Role role, const relations::LocalKey& k) const;
  };

  std::int64_t ns(std::uint64_t t) const { return defs_.ns_from_start(t); }
  /// Numbers the calls relations::CollectiveCalls hands out into instances.
  auto add_member(std::uint32_t loc) {
    return [this, loc](const relations::CollectiveCall& c) {
      add_member(defs_.locations[loc].process, c);
    };
  }
  void add_member(std::uint32_t process, const relations::CollectiveCall& c);
  void evaluate(std::uint32_t comm, const CollInstance& inst);
  relations::CollectiveMember member(std::uint32_t rank, std::uint32_t process) const {
    return {rank, process, process}; // zero latency: nodes make no difference
  }
  Emit emit(std::uint32_t loc) { return {*this, loc}; }
  bool in_neighborhood_collective(std::uint32_t loc) const;
  void contribute(const LocalKey& k, std::uint32_t loc, std::int64_t t);
  void receive(const LocalKey& k, std::uint32_t loc, std::int64_t t);
  void settle(const LocalKey& k); ///< evaluates and drops the channel if it is complete
  void evaluate(const LocalChannel& ch);
  std::size_t team_size(std::uint64_t team) const;
  static void count(ConditionCounts& c, std::int64_t t, std::int64_t bound);

  const ArchiveDefs& defs_;
  relations::RefIndex<Comm> comms_; ///< defs_.comms
  std::vector<Thread> threads_;
  std::vector<relations::CollectiveNumbering> instance_numbers_;              ///< per process
  std::map<std::pair<std::uint32_t, std::uint64_t>, CollInstance> instances_; ///< comm, seq
  relations::MemberRanks ranks_;                                              ///< by process
  std::map<LocalKey, LocalChannel> local_;
  /// What a task's completion hands over to: its parent's taskwait, and its taskgroup if it was
  /// created in one or descends from a task that was. Kept from its creation to its completion.
  struct TaskInfo {
    LocalKey wait{}, group{};
    bool grouped = false;
  };
  std::map<std::pair<std::uint32_t, TaskKey>, TaskInfo> tasks_;
  /// Completions recorded before their task's creation (a thread whose clock is behind): handed
  /// to the parent's taskwait when the creation comes.
  std::map<std::pair<std::uint32_t, TaskKey>, std::pair<std::uint32_t, std::int64_t>> early_;
};

} // namespace htrace::report
