// The OpenMP relations of one thread (location), as htrace-correct and htrace-report both derive
// them from its events in record order: fork -> every other member's team begin; members' team
// ends -> the master's join; a barrier: every member's enter (and task completions inside it) ->
// every member's leave; lock release with order n -> the acquisition with order n + 1; task
// creation -> every switch to the task. The thread also tracks the task it runs and its open
// taskwait and taskgroup regions: a task's completion hands over to its parent's taskwait and to
// its taskgroup, which the caller joins across the threads of a process (task_created()).
//
// Every relation is a LocalKey (unique within one process) with each event's role in it, handed
// to an `emit(Event, Role, const LocalKey&)` callable. Event is the caller's handle of the event:
// htrace-correct's event index, htrace-report's timestamp. Sequence numbers come from records
// only, never from timestamps, so every reader derives the same keys.
#ifndef HTRACE_RELATIONS_OPENMP_THREAD_H
#define HTRACE_RELATIONS_OPENMP_THREAD_H

#include "format/global_defs.h"
#include "relations/event.h"

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace htrace::relations {

/// The kinds of OpenMP relation (numbered: they are part of htrace-correct's channel keys).
enum class LocalSub : std::uint64_t { Fork = 1, Join, Barrier, Lock, Task, Taskwait, Taskgroup };
struct LocalKey {
  LocalSub sub;
  std::uint64_t a, b, c;
  bool operator<(const LocalKey& o) const {
    return std::tie(sub, a, b, c) < std::tie(o.sub, o.a, o.b, o.c);
  }
};

/// A task: (team, creating thread, generation); implicit tasks get creator 0x80000000|location.
using TaskKey = std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>;
inline TaskKey implicit_task(std::uint64_t team, std::uint32_t location, std::uint64_t instance) {
  return TaskKey{team, 0x80000000u | location, static_cast<std::uint32_t>(instance)};
}
/// The relation of a task's n-th taskwait or taskgroup (sub Taskwait or Taskgroup).
inline LocalKey task_wait_key(LocalSub sub, const TaskKey& task, std::uint64_t n) {
  return {sub, std::get<0>(task), (std::uint64_t{std::get<1>(task)} << 32) | std::get<2>(task), n};
}

/// One taskgroup region instance: the task that entered it and its count of taskgroups so far.
struct TaskGroup {
  TaskKey task;
  std::uint64_t index;
  LocalKey key() const { return task_wait_key(LocalSub::Taskgroup, task, index); }
};

/// What a task's creation says about where its completion hands over to.
struct TaskCreation {
  TaskKey child, parent;
  std::uint64_t parent_waits = 0; ///< the parent's taskwaits passed: the child's is the next one
  bool in_group = false;          ///< created inside a taskgroup its parent entered
  TaskGroup group{};              ///< that taskgroup
  LocalKey wait_key() const { return task_wait_key(LocalSub::Taskwait, parent, parent_waits); }
};

class OpenMpThread {
public:
  /// `location` identifies the thread's implicit tasks (any number unique within its process).
  explicit OpenMpThread(std::uint32_t location) : location_(location) {}

  template <class Emit> void fork(Event ev, Emit&&) { pending_forks_.push_back(ev); }

  template <class Emit> void team_begin(Event ev, std::uint64_t team, Emit&& emit) {
    Team tm{team, team_instances_[team]++, 0, !pending_forks_.empty(), false};
    const LocalKey key{LocalSub::Fork, team, tm.instance, 0};
    teams_.push_back(tm);
    current_ = implicit_task(team, location_, tm.instance);
    if (tm.master) {
      const Event fork = pending_forks_.back();
      pending_forks_.pop_back();
      emit(fork, Role::Contribute, key);
    } else {
      emit(ev, Role::Receive, key);
    }
  }

  template <class Emit> void team_end(Event ev, std::uint64_t team, Emit&& emit) {
    for (std::size_t i = teams_.size(); i-- > 0;) {
      Team& tm = teams_[i];
      if (tm.comm != team || tm.ended) continue;
      if (tm.master) { // its own team end precedes its join locally
        tm.ended = true;
      } else {
        const LocalKey key{LocalSub::Join, team, tm.instance, 0};
        teams_.erase(teams_.begin() + static_cast<long>(i));
        emit(ev, Role::Contribute, key);
      }
      return;
    }
  }

  /// The master's most recently ended team is the one joined.
  template <class Emit> void join(Event ev, Emit&& emit) {
    for (std::size_t i = teams_.size(); i-- > 0;) {
      if (!teams_[i].ended) continue;
      const LocalKey key{LocalSub::Join, teams_[i].comm, teams_[i].instance, 0};
      teams_.erase(teams_.begin() + static_cast<long>(i));
      emit(ev, Role::Receive, key);
      return;
    }
  }

  template <class Emit> void enter(Event ev, const format::RegionClass& region, Emit&& emit) {
    using Sync = format::RegionClass::Sync;
    ++region_depth_;
    if (region.sync == Sync::Taskgroup)
      open_groups_.push_back({{current_, groups_entered_[current_]++}, region_depth_});
    if (region.sync == Sync::Taskwait) open_waits_.emplace_back(current_, region_depth_);
    if (barrier_depth_ > 0) {
      ++barrier_depth_;
    } else if (region.sync == Sync::Barrier) {
      if (Team* tm = active_team()) {
        barrier_depth_ = 1;
        emit(ev, Role::Contribute, barrier_key(*tm));
      }
    }
  }

  template <class Emit> void leave(Event ev, Emit&& emit) {
    if (!open_groups_.empty() && open_groups_.back().second == region_depth_) {
      const LocalKey key = open_groups_.back().first.key();
      open_groups_.pop_back();
      emit(ev, Role::Receive, key);
    }
    if (!open_waits_.empty() && open_waits_.back().second == region_depth_) {
      const TaskKey parent = open_waits_.back().first;
      open_waits_.pop_back();
      emit(ev, Role::Receive, task_wait_key(LocalSub::Taskwait, parent, taskwaits_[parent]++));
    }
    --region_depth_;
    if (barrier_depth_ == 0 || --barrier_depth_ > 0) return;
    if (Team* tm = active_team()) {
      const LocalKey key = barrier_key(*tm);
      ++tm->barriers;
      emit(ev, Role::Receive, key);
    }
  }

  template <class Emit>
  void lock_acquire(Event ev, std::uint64_t model, std::uint32_t lock, std::uint32_t order,
                    Emit&& emit) {
    emit(ev, Role::Receive, LocalKey{LocalSub::Lock, model, lock, order});
  }
  template <class Emit>
  void lock_release(Event ev, std::uint64_t model, std::uint32_t lock, std::uint32_t order,
                    Emit&& emit) {
    emit(ev, Role::Contribute, LocalKey{LocalSub::Lock, model, lock, std::uint64_t{order} + 1});
  }

  /// A task runs only after it was created: create -> every switch to it.
  template <class Emit>
  TaskCreation task_create(Event ev, std::uint64_t team, std::uint32_t creator,
                           std::uint32_t generation, Emit&& emit) {
    TaskCreation c;
    c.child = TaskKey{team, creator, generation};
    c.parent = current_;
    c.parent_waits = taskwaits_[current_];
    if (!open_groups_.empty() && open_groups_.back().first.task == current_)
      c.in_group = true, c.group = open_groups_.back().first;
    emit(ev, Role::Contribute, LocalKey{LocalSub::Task, team, creator, generation});
    return c;
  }

  /// Generation 0 is the switch back to the implicit task.
  template <class Emit>
  void task_switch(Event ev, std::uint64_t team, std::uint32_t creator, std::uint32_t generation,
                   Emit&& emit) {
    if (generation == 0) {
      if (Team* tm = active_team()) current_ = implicit_task(tm->comm, location_, tm->instance);
      return;
    }
    current_ = TaskKey{team, creator, generation};
    emit(ev, Role::Receive, LocalKey{LocalSub::Task, team, creator, generation});
  }

  /// Tasks still running at a barrier complete inside it, and no thread leaves the barrier
  /// before they have: a completion there is one more contribution to the barrier. (Its
  /// taskwait and taskgroup are the caller's: they join threads.)
  template <class Emit> void task_complete(Event ev, Emit&& emit) {
    if (barrier_depth_ > 0)
      if (Team* tm = active_team()) emit(ev, Role::Contribute, barrier_key(*tm));
  }

private:
  struct Team {
    std::uint64_t comm, instance, barriers;
    bool master, ended;
  };
  Team* active_team() {
    for (std::size_t i = teams_.size(); i-- > 0;)
      if (!teams_[i].ended) return &teams_[i];
    return nullptr;
  }
  /// The team's current barrier.
  static LocalKey barrier_key(const Team& tm) {
    return {LocalSub::Barrier, tm.comm, tm.instance, tm.barriers};
  }

  // What every enter and leave reads comes first, in one cache line: readers in time order fetch
  // a thread's state ahead of its event up to here.
  int barrier_depth_ = 0;
  int region_depth_ = 0;
  // Open taskwait and taskgroup regions with the region depth at their Enter (tasks run inside
  // barriers and inside other tasks' waits have their own).
  std::vector<std::pair<TaskKey, int>> open_waits_;
  std::vector<std::pair<TaskGroup, int>> open_groups_;
  std::uint32_t location_;
  std::vector<Event> pending_forks_;
  std::vector<Team> teams_;
  std::map<std::uint64_t, std::uint64_t> team_instances_;
  TaskKey current_{0, 0, 0};                        ///< the task running on this thread
  std::map<TaskKey, std::uint64_t> taskwaits_;      ///< per task: taskwaits it passed here
  std::map<TaskKey, std::uint64_t> groups_entered_; ///< per task: taskgroups it entered here
};

} // namespace htrace::relations
#endif
