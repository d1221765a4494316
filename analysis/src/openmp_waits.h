// The OpenMP wait states after Scalasca's patterns (analysis/README.md): threads waiting in a
// barrier for the last member of their team to enter it, and threads waiting to acquire a lock or
// enter a critical section that another thread holds. Barrier instances and lock hand-overs are
// the relations htrace-correct uses (relations/openmp_thread.h), evaluated on the archive's
// timestamps. An instance is held until every member has entered and left it, a hand-over until
// both its release and its acquisition are seen.
#ifndef HTRACE_ANALYSIS_OPENMP_WAITS_H
#define HTRACE_ANALYSIS_OPENMP_WAITS_H

#include "analysis/wait_states.h"
#include "relations/location_cache.h"
#include "relations/openmp_thread.h"
#include "relations/ref_index.h"

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace htrace::analysis::detail {

class OpenMpWaits {
public:
  /// Adds its waits to `results`, whose splits by location are sized already.
  OpenMpWaits(const RunLayout& layout, WaitStates& results,
              const WaitStateAnalysis::WaitObserver& observer);

  void enter(std::uint32_t loc, std::int64_t t, std::uint32_t region);
  void leave(std::uint32_t loc, std::int64_t t);
  void fork(std::uint32_t loc, std::int64_t t);
  void team_begin(std::uint32_t loc, std::int64_t t, std::uint32_t team);
  void team_end(std::uint32_t loc, std::int64_t t, std::uint32_t team);
  void join(std::uint32_t loc, std::int64_t t);
  void lock_acquire(std::uint32_t loc, std::int64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order);
  void lock_release(std::uint32_t loc, std::int64_t t, std::uint8_t model, std::uint32_t lock,
                    std::uint32_t order);
  /// `loc`'s next event comes next: fetches what its events read.
  void prefetch(std::uint32_t loc) const;
  /// After the last event: Idle Threads; a barrier instance some member never left is evaluated
  /// with the members seen (a team of unknown size is evaluated only here); hand-overs missing a
  /// side wait for nothing.
  void finish();

private:
  static constexpr std::int64_t kNotLeft = INT64_MIN;
  using Key = std::pair<std::uint32_t, relations::LocalKey>; ///< (process, relation)
  struct Frame {
    std::uint32_t region;
    bool openmp;
    std::int64_t enter;
  };
  /// What every event of a location reads comes first, then the OpenMP relations' state, whose
  /// own first fields are those an enter and a leave read (prefetch() fetches up to there).
  struct alignas(64) Thread {
    Thread(std::uint32_t loc, bool alone) : alone_in_process(alone), omp(loc) {}
    // Idle Threads: its time outside forks and teams (serial code if it is a master) per
    // innermost region, from its first event on.
    std::int64_t first = kNotLeft, last = 0;
    std::uint32_t forks = 0; ///< forks not yet joined
    bool master = false;     ///< forked outside any fork and team
    bool member = false;     ///< was a member of a team
    /// No other location shares its process: no thread idles while it runs serial code, which is
    /// then not split by region (an MPI-only run's every event would add there).
    bool alone_in_process;
    relations::InlineStack<Frame, 2> stack;
    /// The region it left last, while it entered none since: libhtrace leaves omp_set_lock
    /// before it records the acquisition, at the same time.
    std::optional<Frame> left;
    std::vector<std::uint32_t> teams; ///< the teams it is a member of, innermost last
    std::int64_t serial_ns = 0;
    /// (region, ns): the few regions serial code runs in, scanned (a tree per location missed
    /// the cache at each level).
    std::vector<std::pair<std::uint32_t, std::int64_t>> serial;
    void add_serial(std::uint32_t region, std::int64_t ns);
    relations::OpenMpThread omp;
  };
  struct Member {
    std::uint32_t loc, region;
    std::int64_t enter, leave = kNotLeft;
  };
  struct Barrier {
    std::vector<Member> members;
    std::size_t left = 0;
  };
  struct Acquire {
    std::uint32_t loc, region, team;
    std::int64_t enter, acquired;
  };
  struct Handover {
    std::optional<std::pair<std::uint32_t, std::int64_t>> release; ///< location, time
    std::optional<Acquire> acquire;
  };
  /// The relation callable of OpenMpThread for one event of `loc`.
  struct Emit {
    OpenMpWaits& w;
    std::uint32_t loc;
    std::uint32_t region; ///< the region being entered, for a barrier's contribution
    void operator()(relations::Event t, relations::Role role, const relations::LocalKey& k) const;
  };

  void barrier_event(std::uint32_t loc, std::uint32_t region, std::int64_t t, relations::Role role,
                     const Key& key);
  void lock_event(std::uint32_t loc, std::int64_t t, relations::Role role, const Key& key);
  /// Every event of `loc` at `t`, before its own effect: the time since its previous event.
  void tick(std::uint32_t loc, std::int64_t t);
  void idle_threads();
  void evaluate(const Key& key, const Barrier& b);
  void evaluate(const Handover& h);
  void add(WaitPattern p, std::uint32_t loc, std::uint32_t cause, std::uint32_t region,
           std::uint32_t comm, std::int64_t enter, std::int64_t wait);
  std::size_t team_size(std::uint64_t team) const;

  const RunLayout& layout_;
  relations::RefIndex<std::vector<std::uint32_t>> teams_; ///< layout_.comm_members
  WaitStates& results_;
  const WaitStateAnalysis::WaitObserver& observer_;
  std::vector<Thread> threads_;
  std::map<Key, Barrier> barriers_;
  std::map<Key, Handover> handovers_;
};

} // namespace htrace::analysis::detail
#endif
