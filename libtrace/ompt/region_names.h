// Region ids for OpenMP constructs, named "!$omp <construct> @<where>" after the construct's
// code address. <where> is symbol+offset when dladdr can name the symbol, else module+offset
// (both resolvable offline with addr2line). Cached per thread: a hit costs one table probe.
#pragma once

#include <cstdint>

#include "record/recorder.h"

namespace htrace::ompt {

enum class Construct : std::uint8_t {
  Parallel, Barrier, ImplicitBarrier, Taskwait, Taskgroup, Loop, Sections, Single, Workshare,
  Distribute, Taskloop, Scope, Masked, Critical, SetLock, SetNestLock, Ordered
};

record::RegionId region_for(Construct construct, const void* codeptr);

} // namespace htrace::ompt
