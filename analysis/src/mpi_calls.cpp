#include "mpi_calls.h"

#include <algorithm>
#include <tuple>

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
  Location& l = locations_[loc];
  const std::uint64_t number = mpi_regions_.contains(region) ? l.calls++ : Frame::kNotMpi;
  l.stack.push({t, number, region, CallRef::kNotHeld});
}

void MpiCalls::leave(std::uint32_t loc, std::int64_t t) {
  auto& stack = locations_[loc].stack;
  if (stack.empty()) return; // a leave without its enter (a truncated start): no call
  const Frame f = stack.top();
  stack.pop();
  if (f.held == CallRef::kNotHeld) return;
  HeldCall& c = held_[f.held];
  c.leave = t;
  if (c.open > 0) return;
  add(c);
  release(f.held);
}

std::optional<CallRef> MpiCalls::current(std::uint32_t loc) const {
  const auto& stack = locations_[loc].stack;
  for (std::size_t i = stack.size(); i-- > 0;)
    if (const Frame& f = stack[i]; f.mpi())
      return CallRef{loc, f.region, f.number, f.enter, f.held};
  return std::nullopt;
}

MpiCalls::Frame* MpiCalls::frame_of(const CallRef& call) {
  auto& stack = locations_[call.loc].stack;
  for (std::size_t i = stack.size(); i-- > 0;)
    if (stack[i].number == call.number) return &stack[i];
  return nullptr;
}

void MpiCalls::release(std::uint32_t slot) {
  held_[slot] = HeldCall{};
  free_.push_back(slot);
}

void MpiCalls::hold(CallRef& call) {
  if (call.held == CallRef::kNotHeld) {
    if (free_.empty()) {
      call.held = static_cast<std::uint32_t>(held_.size());
      held_.emplace_back();
    } else {
      call.held = free_.back();
      free_.pop_back();
    }
    HeldCall& c = held_[call.held];
    c.loc = call.loc;
    c.number = call.number;
    c.enter = call.enter;
    c.region = call.region;
    if (Frame* f = frame_of(call)) f->held = call.held; // (held first at a record inside it)
  }
  ++held_[call.held].open;
}

void MpiCalls::settle(const CallRef& call, const Candidate* c) {
  if (call.held >= held_.size()) return; // not held, or after finish()
  HeldCall& held = held_[call.held];
  if (held.loc != call.loc || held.number != call.number) return;
  if (c) held.offer(*c);
  if (--held.open > 0 || held.leave == kNotLeft) return;
  add(held);
  release(call.held);
}

void MpiCalls::finish() {
  std::vector<const HeldCall*> left; // by location, then in call order
  for (const HeldCall& c : held_)
    if (c.loc != HeldCall::kFree && c.leave != kNotLeft) left.push_back(&c);
  std::sort(left.begin(), left.end(), [](const HeldCall* a, const HeldCall* b) {
    return std::tie(a->loc, a->number) < std::tie(b->loc, b->number);
  });
  for (const HeldCall* c : left)
    add(*c);
  held_ = {};
  free_ = {};
}

namespace {

// Of two candidates of a pattern, whether `a` is kept: the longer wait, and of equal ones the
// lower location waited for, then the lower communicator, whatever order they come in (the
// readers deliver a call's relations in different orders).
bool kept_over(const Candidate& a, const Candidate& b) {
  if (a.wait_ns != b.wait_ns) return a.wait_ns > b.wait_ns;
  return std::tie(a.cause, a.comm) < std::tie(b.cause, b.comm);
}

} // namespace

void MpiCalls::HeldCall::offer(const Candidate& c) {
  Candidate* const end = first.data() + in_place;
  for (Candidate* l = first.data(); l != end; ++l)
    if (l->pattern == c.pattern) {
      if (kept_over(c, *l)) *l = c;
      return;
    }
  for (Candidate& l : more)
    if (l.pattern == c.pattern) {
      if (kept_over(c, l)) l = c;
      return;
    }
  if (in_place < first.size())
    first[in_place++] = c;
  else
    more.push_back(c);
}

template <class F> void MpiCalls::HeldCall::each(F&& f) const {
  // Candidates have distinct patterns, nearly always one or two: sorted by insertion. (Only the
  // entries written are read: a table of every pattern, zeroed in wide stores and read back in
  // narrow loads, stalled on the store buffer.)
  std::array<const Candidate*, kWaitPatterns> order;
  std::size_t n = 0;
  auto insert = [&](const Candidate* c) {
    std::size_t i = n++;
    for (; i > 0 && order[i - 1]->pattern > c->pattern; --i)
      order[i] = order[i - 1];
    order[i] = c;
  };
  for (std::size_t i = 0; i < in_place; ++i)
    insert(&first[i]);
  for (const Candidate& c : more)
    insert(&c);
  for (std::size_t i = 0; i < n; ++i)
    f(*order[i]);
}

// Scalasca bounds every wait by the call it happens in: a partner that came after the call had
// already left (possible only where the clock condition is violated) cannot make it wait longer.
void MpiCalls::add(const HeldCall& h) {
  const std::int64_t duration = h.leave - h.enter;
  std::int64_t longest = 0;
  h.each([&](const Candidate& c) {
    if (c.wait_ns <= 0 || duration <= 0) return;
    if (c.only_if_blocked && h.leave <= h.enter + c.wait_ns) return;
    const std::int64_t wait = std::min(c.wait_ns, duration);
    PatternTime& p = results.patterns[static_cast<std::size_t>(c.pattern)];
    p.total_ns += wait;
    ++p.calls;
    p.longest_ns = std::max(p.longest_ns, wait);
    p.by_location[h.loc] += wait;
    p.caused_by[c.cause] += wait;
    p.by_region[h.region] += wait;
    p.by_comm[c.comm] += wait;
    longest = std::max(longest, wait);
    if (wait_observer) wait_observer({h.loc, h.region, h.enter, c.pattern, wait, c.cause});
  });
  if (longest > 0 && observer) observer(h.loc, h.enter, longest);
}

} // namespace htrace::analysis::detail
