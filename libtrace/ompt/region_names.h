// Region ids for OpenMP constructs, named "!$omp <construct> @<where>" after the construct's
// code address. <where> is symbol+offset when dladdr can name the symbol, else module+offset
// (both resolvable offline with addr2line). Cached per thread: a hit costs one table probe.
#pragma once

#include "record/recorder.h"

#include <cstddef>
#include <cstdint>

namespace htrace::ompt {

enum class Construct : std::uint8_t {
  Parallel,
  Barrier,
  ImplicitBarrier,
  Taskwait,
  Taskgroup,
  Loop,
  Sections,
  Single,
  Workshare,
  Distribute,
  Taskloop,
  Scope,
  Masked,
  Critical,
  SetLock,
  SetNestLock,
  Ordered
};

/// A thread's cache of (construct, codeptr) -> region; lives in the thread's state.
struct RegionCache {
  struct Entry {
    const void* codeptr = nullptr;
    Construct construct = Construct::Parallel;
    bool valid = false;
    record::RegionId id = 0;
  };
  static constexpr std::size_t kSize = 256;
  Entry entries[kSize];
};

record::RegionId region_for(RegionCache& cache, Construct construct, const void* codeptr);

} // namespace htrace::ompt
