#include "analysis_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace htrace::report {
namespace {

bool material_wait(std::int64_t a, std::int64_t b) {
  const std::int64_t d = std::llabs(a - b);
  return d >= kMaterialWaitNs &&
         static_cast<double>(d) >= kMaterialWaitShare * static_cast<double>(std::max(a, b));
}

void add_change(Comparison& c, const std::string& pattern, const std::string& split,
                const std::string& item, std::int64_t before, std::int64_t after) {
  if (!material_wait(before, after)) return;
  const char* change = before == 0      ? "appears"
                       : after == 0     ? "vanishes"
                       : after > before ? "grows"
                                        : "shrinks";
  c.waits.push_back({pattern, split, item, before, after, change});
}

/// Both splits keyed by name; a name only one archive has counts 0 in the other.
void compare_named(Comparison& c, const std::string& pattern, const char* split,
                   const std::map<std::uint32_t, std::int64_t>& before,
                   const std::map<std::uint32_t, std::int64_t>& after,
                   std::string (*name)(const ArchiveDefs&, std::uint32_t),
                   const ArchiveDefs& before_defs, const ArchiveDefs& after_defs) {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> both;
  for (const auto& [ref, ns] : before)
    both[name(before_defs, ref)].first += ns;
  for (const auto& [ref, ns] : after)
    both[name(after_defs, ref)].second += ns;
  for (const auto& [item, ns] : both)
    add_change(c, pattern, split, item, ns.first, ns.second);
}

void compare_located(Comparison& c, const std::string& pattern, const char* split,
                     const std::vector<std::int64_t>& before,
                     const std::vector<std::int64_t>& after) {
  for (std::size_t i = 0; i < std::max(before.size(), after.size()); ++i)
    add_change(c, pattern, split, std::to_string(i), i < before.size() ? before[i] : 0,
               i < after.size() ? after[i] : 0);
}

std::int64_t total_waiting(const analysis::WaitStates& w) {
  std::int64_t t = 0;
  for (const analysis::PatternTime& p : w.patterns)
    t += p.total_ns;
  return t;
}

void headline_metrics(Comparison& c, const char* scope, const analysis::Efficiency& before,
                      const analysis::Efficiency& after) {
  const auto b = efficiency_metrics(before), a = efficiency_metrics(after);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool defined = !std::isnan(b[i].second) && !std::isnan(a[i].second);
    const bool material = defined ? std::fabs(a[i].second - b[i].second) >= kMaterialEfficiency
                                  : std::isnan(b[i].second) != std::isnan(a[i].second);
    c.headline.push_back({a[i].first, scope, b[i].second, a[i].second, material});
  }
}

} // namespace

std::string region_name(const ArchiveDefs& defs, std::uint32_t r) {
  if (r == analysis::kNoRegion) return "(outside any region)";
  auto it = defs.regions.find(r);
  return it == defs.regions.end() ? "region " + std::to_string(r) : it->second.name;
}

std::string comm_name(const ArchiveDefs& defs, std::uint32_t c) {
  if (c == analysis::kNoComm) return "(no team)";
  auto it = defs.comms.find(c);
  return it == defs.comms.end() ? "comm " + std::to_string(c) : it->second.name;
}

std::vector<std::pair<const char*, double>> efficiency_metrics(const analysis::Efficiency& e) {
  return {{"parallel_efficiency", e.parallel},
          {"load_balance", e.load_balance},
          {"communication_efficiency", e.communication},
          {"serialization_efficiency", e.serialization},
          {"transfer_efficiency", e.transfer}};
}

Comparison compare(const ArchiveDefs& before_defs, const RunAnalysis& before,
                   const ArchiveDefs& after_defs, const RunAnalysis& after) {
  Comparison c;
  for (std::size_t i = 0; i < analysis::kWaitPatterns; ++i) {
    const std::string key = analysis::pattern_key(static_cast<analysis::WaitPattern>(i));
    const analysis::PatternTime &b = before.waits.patterns[i], &a = after.waits.patterns[i];
    add_change(c, key, "total_ns", "", b.total_ns, a.total_ns);
    compare_located(c, key, "by_location", b.by_location, a.by_location);
    compare_located(c, key, "caused_by", b.caused_by, a.caused_by);
    compare_named(c, key, "by_region", b.by_region, a.by_region, region_name, before_defs,
                  after_defs);
    compare_named(c, key, "by_comm", b.by_comm, a.by_comm, comm_name, before_defs, after_defs);
  }
  const std::int64_t tb = total_waiting(before.waits), ta = total_waiting(after.waits);
  c.headline.push_back({"total_waiting_ns", "run", static_cast<double>(tb), static_cast<double>(ta),
                        material_wait(tb, ta)});
  headline_metrics(c, "run", before.efficiency.run, after.efficiency.run);
  if (before.efficiency.window && after.efficiency.window)
    headline_metrics(c, "window", *before.efficiency.window, *after.efficiency.window);
  return c;
}

} // namespace htrace::report
