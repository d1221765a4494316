#include "analysis/efficiency.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace htrace::analysis {
namespace {

constexpr double kUndefined = std::numeric_limits<double>::quiet_NaN();

double ratio(double num, double den) {
  return den > 0 ? num / den : kUndefined;
}

} // namespace

Efficiency efficiency_of(TimeWindow window, std::vector<LocationTimes> locations) {
  Efficiency e;
  e.window = window;
  e.runtime_ns = window.end_ns - window.begin_ns;
  double sum = 0;
  for (const LocationTimes& l : locations) {
    if (!l.calls_mpi) continue;
    ++e.ranks;
    sum += static_cast<double>(l.useful_ns);
    e.max_useful_ns = std::max(e.max_useful_ns, l.useful_ns);
    e.ideal_runtime_ns = std::max(e.ideal_runtime_ns, l.useful_ns + l.waiting_ns);
  }
  e.locations = std::move(locations);
  if (e.ranks == 0 || e.runtime_ns <= 0) {
    e.load_balance = e.communication = e.serialization = e.transfer = e.parallel = kUndefined;
    return e;
  }
  e.avg_useful_ns = sum / e.ranks;
  e.load_balance = ratio(e.avg_useful_ns, static_cast<double>(e.max_useful_ns));
  e.serialization =
      ratio(static_cast<double>(e.max_useful_ns), static_cast<double>(e.ideal_runtime_ns));
  e.transfer = ratio(static_cast<double>(e.ideal_runtime_ns), static_cast<double>(e.runtime_ns));
  // The products, not separate quotients, so that the model's identities hold to the last bit.
  e.communication = e.serialization * e.transfer;
  e.parallel = e.load_balance * e.communication;
  return e;
}

EfficiencyAnalysis::EfficiencyAnalysis(std::size_t locations,
                                       const std::map<std::uint32_t, format::RegionDef>& regions,
                                       std::optional<TimeWindow> window)
    : mpi_regions_(regions, [](const format::RegionDef& def) { return def.cls.mpi(); }),
      window_(window), locs_(locations), waits_(locations) {}

void EfficiencyAnalysis::touch(Loc& l, std::int64_t t) {
  l.first = l.seen ? std::min(l.first, t) : t;
  l.last = l.seen ? std::max(l.last, t) : t;
  l.seen = true;
}

std::int64_t EfficiencyAnalysis::clipped(std::int64_t from, std::int64_t to) const {
  if (!window_) return 0;
  return std::max<std::int64_t>(0,
                                std::min(to, window_->end_ns) - std::max(from, window_->begin_ns));
}

void EfficiencyAnalysis::add_call(Loc& l, std::int64_t from, std::int64_t to) {
  l.mpi += std::max<std::int64_t>(0, to - from);
  l.mpi_win += clipped(from, to);
}

void EfficiencyAnalysis::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  Loc& l = locs_[loc];
  touch(l, t);
  const bool mpi = mpi_regions_.contains(region);
  if (l.open < kOpenBits) {
    const std::uint64_t bit = std::uint64_t{1} << l.open;
    l.mpi_open = mpi ? l.mpi_open | bit : l.mpi_open & ~bit;
  } else {
    waits_[loc].deeper.push_back(mpi);
  }
  ++l.open;
  if (!mpi) return;
  l.calls_mpi = true;
  if (l.depth++ == 0) l.call_enter = t;
}

void EfficiencyAnalysis::leave(std::uint32_t loc, std::int64_t t) {
  Loc& l = locs_[loc];
  touch(l, t);
  if (l.open == 0) return; // a leave without its enter (a truncated start)
  bool mpi = false;
  if (--l.open < kOpenBits) {
    mpi = (l.mpi_open >> l.open) & 1;
  } else {
    mpi = waits_[loc].deeper.back();
    waits_[loc].deeper.pop_back();
  }
  if (mpi && --l.depth == 0) add_call(l, l.call_enter, t);
}

void EfficiencyAnalysis::call_wait(std::uint32_t loc, std::int64_t enter, std::int64_t wait_ns) {
  Waits& w = waits_[loc];
  w.waiting += wait_ns;
  w.waiting_win += clipped(enter, enter + wait_ns);
}

EfficiencyAnalysis::Results EfficiencyAnalysis::finish() {
  TimeWindow run;
  bool any = false;
  for (Loc& l : locs_) {
    if (!l.seen) continue;
    if (l.depth > 0) add_call(l, l.call_enter, l.last);
    l.depth = 0;
    run.begin_ns = any ? std::min(run.begin_ns, l.first) : l.first;
    run.end_ns = any ? std::max(run.end_ns, l.last) : l.last;
    any = true;
  }
  std::vector<LocationTimes> whole(locs_.size()), part(locs_.size());
  for (std::size_t i = 0; i < locs_.size(); ++i) {
    const Loc& l = locs_[i];
    const Waits& w = waits_[i];
    whole[i] = {l.calls_mpi, l.last - l.first - l.mpi, l.mpi, w.waiting};
    if (window_) {
      const std::int64_t span = l.seen ? clipped(l.first, l.last) : 0;
      part[i] = {l.calls_mpi, span - l.mpi_win, l.mpi_win, w.waiting_win};
    }
  }
  Results r;
  r.run = efficiency_of(run, std::move(whole));
  if (window_) r.window = efficiency_of(*window_, std::move(part));
  return r;
}

} // namespace htrace::analysis
