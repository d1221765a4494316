#include "mpi_calls.h"

#include <algorithm>

namespace htrace::analysis::detail {

MpiCalls::MpiCalls(std::size_t locations, const std::map<std::uint32_t, format::RegionDef>& regions)
    : stacks_(locations), calls_(locations), held_(locations) {
  for (const auto& [ref, def] : regions)
    if (def.cls.mpi()) mpi_regions_.insert(ref);
  for (PatternTime& p : results.patterns) {
    p.by_location.assign(locations, 0);
    p.caused_by.assign(locations, 0);
  }
}

void MpiCalls::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  const bool mpi = mpi_regions_.count(region) > 0;
  stacks_[loc].push_back({mpi, region, mpi ? calls_[loc]++ : 0, t});
}

void MpiCalls::leave(std::uint32_t loc, std::int64_t t) {
  auto& stack = stacks_[loc];
  if (stack.empty()) return; // a leave without its enter (a truncated start): no call
  const Frame f = stack.back();
  stack.pop_back();
  if (!f.mpi) return;
  auto it = held_[loc].find(f.number);
  if (it == held_[loc].end()) return;
  it->second.leave = t;
  if (it->second.open > 0) return;
  add(loc, it->second);
  held_[loc].erase(it);
}

std::optional<CallRef> MpiCalls::current(std::uint32_t loc) const {
  const auto& stack = stacks_[loc];
  for (auto f = stack.rbegin(); f != stack.rend(); ++f)
    if (f->mpi) return CallRef{loc, f->number, f->enter, f->region};
  return std::nullopt;
}

void MpiCalls::hold(const CallRef& call) {
  auto [it, inserted] = held_[call.loc].try_emplace(call.number);
  if (inserted) {
    it->second.enter = call.enter;
    it->second.region = call.region;
  }
  ++it->second.open;
}

void MpiCalls::settle(const CallRef& call, const Candidate* c) {
  auto it = held_[call.loc].find(call.number);
  if (it == held_[call.loc].end()) return;
  Held& h = it->second;
  if (c) {
    auto& longest = h.longest[static_cast<std::size_t>(c->pattern)];
    if (!longest || c->wait_ns > longest->wait_ns) longest = *c;
  }
  if (--h.open > 0 || h.leave == kNotLeft) return;
  add(call.loc, h);
  held_[call.loc].erase(it);
}

void MpiCalls::finish() {
  for (std::uint32_t loc = 0; loc < held_.size(); ++loc)
    for (const auto& [number, h] : held_[loc])
      if (h.leave != kNotLeft) add(loc, h);
  held_.clear();
}

// Scalasca bounds every wait by the call it happens in: a partner that came after the call had
// already left (possible only where the clock condition is violated) cannot make it wait longer.
void MpiCalls::add(std::uint32_t loc, const Held& h) {
  const std::int64_t duration = h.leave - h.enter;
  std::int64_t longest = 0;
  for (const auto& c : h.longest) {
    if (!c || c->wait_ns <= 0 || duration <= 0) continue;
    if (c->only_if_blocked && h.leave <= h.enter + c->wait_ns) continue;
    const std::int64_t wait = std::min(c->wait_ns, duration);
    PatternTime& p = results.patterns[static_cast<std::size_t>(c->pattern)];
    p.total_ns += wait;
    ++p.calls;
    p.longest_ns = std::max(p.longest_ns, wait);
    p.by_location[loc] += wait;
    p.caused_by[c->cause] += wait;
    p.by_region[h.region] += wait;
    p.by_comm[c->comm] += wait;
    longest = std::max(longest, wait);
    if (wait_observer) wait_observer({loc, h.region, h.enter, c->pattern, wait, c->cause});
  }
  if (longest > 0 && observer) observer(loc, h.enter, longest);
}

} // namespace htrace::analysis::detail
