#include "mpi_calls.h"

#include <algorithm>

namespace htrace::analysis::detail {

MpiCalls::MpiCalls(std::size_t locations, const std::map<std::uint32_t, format::RegionDef>& regions)
    : mpi_regions_(regions, [](const format::RegionDef& def) { return def.cls.mpi(); }),
      locations_(locations) {
  for (PatternTime& p : results.patterns) {
    p.by_location.assign(locations, 0);
    p.caused_by.assign(locations, 0);
  }
}

void MpiCalls::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  const bool mpi = mpi_regions_.contains(region);
  Location& l = locations_[loc];
  l.stack.push({mpi, region, mpi ? l.calls++ : 0, t});
}

void MpiCalls::leave(std::uint32_t loc, std::int64_t t) {
  auto& stack = locations_[loc].stack;
  if (stack.empty()) return; // a leave without its enter (a truncated start): no call
  const Frame f = stack.top();
  stack.pop();
  if (!f.mpi) return;
  HeldCall* c = find_held(loc, f.number);
  if (!c) return;
  c->held.leave = t;
  if (c->held.open > 0) return;
  add(loc, c->held);
  release(loc, c);
}

std::optional<CallRef> MpiCalls::current(std::uint32_t loc) const {
  const auto& stack = locations_[loc].stack;
  for (std::size_t i = stack.size(); i-- > 0;)
    if (const Frame& f = stack[i]; f.mpi) return CallRef{loc, f.number, f.enter, f.region};
  return std::nullopt;
}

namespace {
template <class Calls> auto first_not_before(Calls& held, std::uint64_t number) {
  return std::lower_bound(held.begin(), held.end(), number,
                          [](const auto& c, std::uint64_t n) { return c.number < n; });
}
} // namespace

MpiCalls::HeldCall* MpiCalls::find_held(std::uint32_t loc, std::uint64_t number) {
  auto& held = locations_[loc].held;
  const auto it = first_not_before(held, number);
  return it != held.end() && it->number == number ? &*it : nullptr;
}

void MpiCalls::release(std::uint32_t loc, HeldCall* c) {
  auto& held = locations_[loc].held;
  held.erase(held.begin() + (c - held.data()));
}

void MpiCalls::hold(const CallRef& call) {
  auto& held = locations_[call.loc].held;
  // (Calls are held in the order they are entered, so this appends but for a relation found
  // inside an outer call after an inner one was held.)
  auto it = first_not_before(held, call.number);
  if (it == held.end() || it->number != call.number) {
    it = held.insert(it, HeldCall{call.number, Held{}});
    it->held.enter = call.enter;
    it->held.region = call.region;
  }
  ++it->held.open;
}

void MpiCalls::settle(const CallRef& call, const Candidate* c) {
  HeldCall* held = find_held(call.loc, call.number);
  if (!held) return;
  Held& h = held->held;
  if (c) h.longest.offer(*c);
  if (--h.open > 0 || h.leave == kNotLeft) return;
  add(call.loc, h);
  release(call.loc, held);
}

void MpiCalls::finish() {
  for (std::uint32_t loc = 0; loc < locations_.size(); ++loc) {
    for (const HeldCall& c : locations_[loc].held) // (in call order)
      if (c.held.leave != kNotLeft) add(loc, c.held);
    locations_[loc].held = {};
  }
}

void MpiCalls::Longest::offer(const Candidate& c) {
  Candidate* const end = first_.data() + in_place_;
  for (Candidate* l = first_.data(); l != end; ++l)
    if (l->pattern == c.pattern) {
      if (c.wait_ns > l->wait_ns) *l = c;
      return;
    }
  for (Candidate& l : more_)
    if (l.pattern == c.pattern) {
      if (c.wait_ns > l.wait_ns) l = c;
      return;
    }
  if (in_place_ < kInPlace)
    first_[in_place_++] = c;
  else
    more_.push_back(c);
}

template <class F> void MpiCalls::Longest::each(F&& f) const {
  std::array<const Candidate*, kWaitPatterns> by_pattern{}; // (one candidate per pattern)
  for (std::size_t i = 0; i < in_place_; ++i)
    by_pattern[static_cast<std::size_t>(first_[i].pattern)] = &first_[i];
  for (const Candidate& c : more_)
    by_pattern[static_cast<std::size_t>(c.pattern)] = &c;
  for (const Candidate* c : by_pattern)
    if (c) f(*c);
}

// Scalasca bounds every wait by the call it happens in: a partner that came after the call had
// already left (possible only where the clock condition is violated) cannot make it wait longer.
void MpiCalls::add(std::uint32_t loc, const Held& h) {
  const std::int64_t duration = h.leave - h.enter;
  std::int64_t longest = 0;
  h.longest.each([&](const Candidate& c) {
    if (c.wait_ns <= 0 || duration <= 0) return;
    if (c.only_if_blocked && h.leave <= h.enter + c.wait_ns) return;
    const std::int64_t wait = std::min(c.wait_ns, duration);
    PatternTime& p = results.patterns[static_cast<std::size_t>(c.pattern)];
    p.total_ns += wait;
    ++p.calls;
    p.longest_ns = std::max(p.longest_ns, wait);
    p.by_location[loc] += wait;
    p.caused_by[c.cause] += wait;
    p.by_region[h.region] += wait;
    p.by_comm[c.comm] += wait;
    longest = std::max(longest, wait);
    if (wait_observer) wait_observer({loc, h.region, h.enter, c.pattern, wait, c.cause});
  });
  if (longest > 0 && observer) observer(loc, h.enter, longest);
}

} // namespace htrace::analysis::detail
