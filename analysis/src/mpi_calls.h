// The MPI calls of each location and the waits attributed to them. Relations inside a call (its
// message ends, its collective membership) each propose a candidate wait once their partner is
// known; the call keeps the longest candidate per pattern (of equal ones, the lowest location
// waited for, then communicator) and, once it has left and every
// relation inside it has been evaluated, bounds it by its own duration and adds it to the
// results. A call is held only from its first relation until then.
#ifndef HTRACE_ANALYSIS_MPI_CALLS_H
#define HTRACE_ANALYSIS_MPI_CALLS_H

#include "analysis/wait_states.h"
#include "relations/location_cache.h"
#include "relations/ref_index.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace htrace::analysis::detail {

/// An MPI call: its location, its number among the location's MPI calls, when it was entered;
/// once held, where MpiCalls keeps it.
struct CallRef {
  static constexpr std::uint32_t kNotHeld = UINT32_MAX;
  std::uint32_t loc = 0;
  std::uint32_t region = 0;
  std::uint64_t number = 0;
  std::int64_t enter = 0;
  std::uint32_t held = kNotHeld; ///< set by MpiCalls::hold()
};

/// A wait a relation proposes for a call.
struct Candidate {
  WaitPattern pattern;
  std::uint32_t cause;  ///< the location waited for
  std::int64_t wait_ns; ///< the partner's time minus the call's enter, not yet bounded
  std::uint32_t comm;
  /// Counts only if the call left after enter + wait_ns: a standard send waited for its receiver
  /// only if it blocked until the receive was posted.
  bool only_if_blocked = false;
};
static_assert(sizeof(Candidate) == 24, "a held call's first candidate is in its first line");

class MpiCalls {
public:
  MpiCalls(std::size_t locations, const std::map<std::uint32_t, format::RegionDef>& regions);

  void enter(std::uint32_t loc, std::int64_t t, std::uint32_t region);
  void leave(std::uint32_t loc, std::int64_t t);
  /// The innermost MPI call open on `loc`, if any.
  std::optional<CallRef> current(std::uint32_t loc) const;
  /// `loc`'s next event comes next: fetches its record.
  void prefetch(std::uint32_t loc) const { relations::prefetch_object(locations_[loc]); }

  /// A relation inside `call` is to be evaluated: the call waits for it. `call` is current()'s
  /// or a copy made after its last hold(), which tells it where the call is held; settle() takes
  /// such a copy.
  void hold(CallRef& call);
  /// One relation of `call` evaluated: `c` is its candidate wait, or null.
  void settle(const CallRef& call, const Candidate* c);
  /// After the last event: every call that has left is added with the candidates it has.
  void finish();

  WaitStates results;
  WaitStateAnalysis::CallWaitObserver observer;
  WaitStateAnalysis::WaitObserver wait_observer; ///< shared with OpenMpWaits

private:
  struct Frame {
    static constexpr std::uint64_t kNotMpi = UINT64_MAX;
    std::int64_t enter;
    std::uint64_t number; ///< among the location's MPI calls; kNotMpi for other regions
    std::uint32_t region;
    std::uint32_t held; ///< where the call is held, if it is
    bool mpi() const { return number != kNotMpi; }
  };
  /// A held call, in a slot of held_ (kFree: a free slot), in two cache lines: what settling a
  /// relation reads and writes (the call, the count of relations, the first candidate) in the
  /// first. The longest candidate of each pattern proposed: a call sees one to three patterns, two
  /// kept in place, more in a vector.
  struct alignas(64) HeldCall {
    static constexpr std::uint32_t kFree = UINT32_MAX;
    std::uint32_t loc = kFree;
    std::uint32_t open = 0; ///< relations not yet evaluated
    std::uint64_t number = 0;
    std::int64_t enter = 0, leave = kNotLeft;
    std::uint32_t region = 0;
    std::uint8_t in_place = 0;
    std::array<Candidate, 2> first;
    std::vector<Candidate> more;

    void offer(const Candidate& c);
    /// Calls `f` with each candidate in pattern order.
    template <class F> void each(F&& f) const;
  };
  /// What a location has, in two cache lines: the innermost frames in place (a location is
  /// rarely more than two regions deep) and the count.
  struct alignas(64) Location {
    relations::InlineStack<Frame, 2> stack;
    std::uint64_t calls = 0; ///< MPI calls entered so far
  };
  static constexpr std::int64_t kNotLeft = INT64_MIN;
  void add(const HeldCall& c);
  /// The open frame of `call`, if it is open.
  Frame* frame_of(const CallRef& call);
  void release(std::uint32_t slot);

  relations::RefSet mpi_regions_;
  std::vector<Location> locations_;
  /// Every held call, each in a slot that its CallRefs name: a relation's partner finds the call
  /// it settles without a search through its location's calls, which at thousands of locations
  /// missed the cache at nearly every step in time order. A call held takes the slot freed last,
  /// likely still in the cache. (Slots of its own for each location, side by side, were slower.)
  std::vector<HeldCall> held_;
  static_assert(sizeof(HeldCall) == 128, "a held call takes two cache lines");
  std::vector<std::uint32_t> free_; ///< free slots of held_, the last freed last
};

} // namespace htrace::analysis::detail
#endif
