#include "ompt/region_names.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace htrace::ompt {

namespace {

struct ConstructInfo {
  const char* name;
  record::RegionRole role;
};

ConstructInfo info(Construct c) {
  using R = record::RegionRole;
  switch (c) {
  case Construct::Parallel:
    return {"parallel", R::Parallel};
  case Construct::Barrier:
    return {"barrier", R::Barrier};
  case Construct::ImplicitBarrier:
    return {"implicit barrier", R::ImplicitBarrier};
  case Construct::Taskwait:
    return {"taskwait", R::TaskWait};
  case Construct::Taskgroup:
    return {"taskgroup", R::TaskWait};
  case Construct::Loop:
    return {"for", R::Loop};
  case Construct::Sections:
    return {"sections", R::Sections};
  case Construct::Single:
    return {"single", R::Single};
  case Construct::Workshare:
    return {"workshare", R::Loop};
  case Construct::Distribute:
    return {"distribute", R::Loop};
  case Construct::Taskloop:
    return {"taskloop", R::Loop};
  case Construct::Scope:
    return {"scope", R::Function};
  case Construct::Masked:
    return {"masked", R::Master};
  case Construct::Critical:
    return {"critical", R::Critical};
  case Construct::SetLock:
    return {"omp_set_lock", R::Function};
  case Construct::SetNestLock:
    return {"omp_set_nest_lock", R::Function};
  case Construct::Ordered:
    return {"ordered", R::Ordered};
  }
  return {"unknown", R::Artificial};
}

std::string where(const void* codeptr) {
  if (codeptr == nullptr) return {};
  char text[512];
  Dl_info dl{};
  if (dladdr(codeptr, &dl) != 0) {
    auto address = reinterpret_cast<std::uintptr_t>(codeptr);
    if (dl.dli_sname != nullptr) {
      std::snprintf(text, sizeof text, " @%s+0x%" PRIxPTR, dl.dli_sname,
                    address - reinterpret_cast<std::uintptr_t>(dl.dli_saddr));
      return text;
    }
    if (dl.dli_fname != nullptr) {
      const char* base = std::strrchr(dl.dli_fname, '/');
      std::snprintf(text, sizeof text, " @%s+0x%" PRIxPTR, base ? base + 1 : dl.dli_fname,
                    address - reinterpret_cast<std::uintptr_t>(dl.dli_fbase));
      return text;
    }
  }
  std::snprintf(text, sizeof text, " @%p", codeptr);
  return text;
}

record::RegionId register_slow(Construct construct, const void* codeptr) {
  static std::mutex mutex;
  static auto* known = new std::map<std::pair<const void*, Construct>, record::RegionId>;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(codeptr, construct);
  auto it = known->find(key);
  if (it != known->end()) return it->second;
  ConstructInfo ci = info(construct);
  std::string name =
      ci.role == record::RegionRole::Function ? ci.name : std::string("!$omp ") + ci.name;
  name += where(codeptr);
  record::RegionId id = record::register_region(name, record::Paradigm::OpenMp, ci.role);
  known->emplace(key, id);
  return id;
}

} // namespace

record::RegionId region_for(RegionCache& cache, Construct construct, const void* codeptr) {
  auto h = (reinterpret_cast<std::uintptr_t>(codeptr) >> 2) ^
           (static_cast<std::uintptr_t>(construct) * 0x9e37u);
  RegionCache::Entry& e = cache.entries[h & (RegionCache::kSize - 1)];
  if (__builtin_expect(e.valid && e.codeptr == codeptr && e.construct == construct, 1)) return e.id;
  record::RegionId id = register_slow(construct, codeptr);
  e = RegionCache::Entry{codeptr, construct, true, id};
  return id;
}

} // namespace htrace::ompt
