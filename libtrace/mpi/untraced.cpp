// Counting of unrecorded calls and the HTRACE_MPI_EXCLUDE selection (see untraced.h).
#include "mpi/untraced.h"

#include "common/log.h"
#include "mpi/wrapper_call.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <fnmatch.h>
#include <sstream>
#include <utility>
#include <vector>

namespace htrace::mpi {
namespace {

std::array<std::atomic<std::uint64_t>, kFunctionCount * kUntracedReasons> g_counts{};

std::size_t slot(FunctionId fn, Untraced why) {
  return static_cast<std::size_t>(fn) * kUntracedReasons + static_cast<std::size_t>(why);
}

std::vector<std::string> patterns(const std::string& spec) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(spec);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) out.push_back(item.substr(first, last - first + 1));
  }
  return out;
}

bool matches(const std::string& pattern, const char* name, const char* family) {
  return pattern == family || fnmatch(pattern.c_str(), name, FNM_CASEFOLD) == 0;
}

const char* reason_text(Untraced why) {
  switch (why) {
  case Untraced::Excluded:
    return "excluded by HTRACE_MPI_EXCLUDE or HTRACE_FILTER_FILE";
  case Untraced::Paused:
    return "made while MPI_Pcontrol(0) had recording off";
  case Untraced::Budget:
    return "made after HTRACE_BUDGET stopped recording";
  }
  return "";
}

} // namespace

void note_untraced(FunctionId fn, Untraced why) noexcept {
  g_counts[slot(fn, why)].fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t untraced_calls(FunctionId fn, Untraced why) noexcept {
  return g_counts[slot(fn, why)].load(std::memory_order_relaxed);
}

bool excluded_by(const std::string& spec, const char* name, const char* family) {
  for (const std::string& p : patterns(spec))
    if (matches(p, name, family)) return true;
  return false;
}

std::string apply_exclusions(const std::string& spec) {
  std::string warnings;
  for (const std::string& p : patterns(spec)) {
    bool any = false;
    for (std::size_t i = 0; i < kFunctionCount; ++i) {
      if (!matches(p, kFunctions[i].name, kFunctions[i].family)) continue;
      any = true;
      if (kFunctions[i].excludable) g_wrappers.regions[i] |= kExcludedRegionBit;
    }
    if (!any)
      warnings += (warnings.empty() ? "" : "; ") + ("HTRACE_MPI_EXCLUDE: '" + p) +
                  "' matches no MPI function or family";
  }
  return warnings;
}

int apply_filter(const RegionFilter& filter) {
  int excluded = 0;
  for (std::size_t i = 0; i < kFunctionCount; ++i)
    if (kFunctions[i].excludable && filter.excludes(kFunctions[i].name)) {
      g_wrappers.regions[i] |= kExcludedRegionBit;
      ++excluded;
    }
  return excluded;
}

void report_untraced(MPI_Comm comm, int rank) {
  std::vector<unsigned long long> local(g_counts.size()), global(g_counts.size());
  for (std::size_t i = 0; i < g_counts.size(); ++i)
    local[i] = g_counts[i].load(std::memory_order_relaxed);
  PMPI_Reduce(local.data(), global.data(), static_cast<int>(local.size()), MPI_UNSIGNED_LONG_LONG,
              MPI_SUM, 0, comm);
  if (rank != 0) return;
  for (std::size_t r = 0; r < kUntracedReasons; ++r) {
    std::vector<std::pair<unsigned long long, const char*>> calls;
    unsigned long long total = 0;
    for (std::size_t f = 0; f < kFunctionCount; ++f)
      if (const unsigned long long n = global[f * kUntracedReasons + r]; n != 0) {
        calls.emplace_back(n, kFunctions[f].name);
        total += n;
      }
    if (calls.empty()) continue;
    std::stable_sort(calls.begin(), calls.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string line;
    for (const auto& [n, name] : calls)
      line += std::string(line.empty() ? "" : ", ") + name + " " + std::to_string(n);
    log::info("untraced: %llu calls %s (all ranks): %s", total,
              reason_text(static_cast<Untraced>(r)), line.c_str());
  }
}

} // namespace htrace::mpi
