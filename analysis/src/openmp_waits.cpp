#include "openmp_waits.h"

#include "pattern_rules.h"

#include <algorithm>

namespace htrace::analysis::detail {

using relations::LocalSub;
using relations::Role;

OpenMpWaits::OpenMpWaits(const RunLayout& layout, WaitStates& results,
                         const WaitStateAnalysis::WaitObserver& observer)
    : layout_(layout), teams_(layout.comm_members), results_(results), observer_(observer) {
  std::vector<std::uint32_t> locations_of; // by process: its locations
  for (const std::uint32_t p : layout.process_of) {
    if (p >= locations_of.size()) locations_of.resize(p + 1);
    ++locations_of[p];
  }
  threads_.reserve(layout.process_of.size());
  for (std::uint32_t loc = 0; loc < layout.process_of.size(); ++loc)
    threads_.emplace_back(loc, locations_of[layout.process_of[loc]] == 1);
}

void OpenMpWaits::Emit::operator()(relations::Event t, Role role,
                                   const relations::LocalKey& k) const {
  const Key key{w.layout_.process_of[loc], k};
  if (k.sub == LocalSub::Barrier)
    w.barrier_event(loc, region, t, role, key);
  else if (k.sub == LocalSub::Lock)
    w.lock_event(loc, t, role, key);
  // Fork and join hold no wait state of their own.
}

void OpenMpWaits::enter(std::uint32_t loc, std::int64_t t, std::uint32_t region) {
  static const format::RegionClass kUnknown;
  auto r = layout_.regions.find(region);
  const format::RegionClass& cls = r == layout_.regions.end() ? kUnknown : r->second.cls;
  tick(loc, t);
  Thread& th = threads_[loc];
  th.stack.push({region, cls.openmp(), t});
  th.left.reset();
  th.omp.enter(t, cls, Emit{*this, loc, region});
}

void OpenMpWaits::leave(std::uint32_t loc, std::int64_t t) {
  tick(loc, t);
  Thread& th = threads_[loc];
  if (!th.stack.empty()) {
    th.left = th.stack.top();
    th.stack.pop();
  }
  th.omp.leave(t, Emit{*this, loc, 0});
}

void OpenMpWaits::fork(std::uint32_t loc, std::int64_t t) {
  tick(loc, t);
  Thread& th = threads_[loc];
  if (th.forks == 0 && th.teams.empty()) th.master = true;
  ++th.forks;
  threads_[loc].omp.fork(t, Emit{*this, loc, 0});
}

void OpenMpWaits::team_begin(std::uint32_t loc, std::int64_t t, std::uint32_t team) {
  tick(loc, t);
  threads_[loc].member = true;
  threads_[loc].teams.push_back(team);
  threads_[loc].omp.team_begin(t, team, Emit{*this, loc, 0});
}

void OpenMpWaits::team_end(std::uint32_t loc, std::int64_t t, std::uint32_t team) {
  tick(loc, t);
  auto& teams = threads_[loc].teams;
  auto it = std::find(teams.rbegin(), teams.rend(), team);
  if (it != teams.rend()) teams.erase(std::next(it).base());
  threads_[loc].omp.team_end(t, team, Emit{*this, loc, 0});
}

void OpenMpWaits::join(std::uint32_t loc, std::int64_t t) {
  tick(loc, t);
  if (threads_[loc].forks > 0) --threads_[loc].forks;
  threads_[loc].omp.join(t, Emit{*this, loc, 0});
}

void OpenMpWaits::lock_acquire(std::uint32_t loc, std::int64_t t, std::uint8_t model,
                               std::uint32_t lock, std::uint32_t order) {
  tick(loc, t);
  threads_[loc].omp.lock_acquire(t, model, lock, order, Emit{*this, loc, 0});
}

void OpenMpWaits::lock_release(std::uint32_t loc, std::int64_t t, std::uint8_t model,
                               std::uint32_t lock, std::uint32_t order) {
  tick(loc, t);
  threads_[loc].omp.lock_release(t, model, lock, order, Emit{*this, loc, 0});
}

std::size_t OpenMpWaits::team_size(std::uint64_t team) const {
  if (team > UINT32_MAX) return 0;
  const std::vector<std::uint32_t>* members = teams_.find(static_cast<std::uint32_t>(team));
  return members ? members->size() : 0;
}

// A member contributes at its enter and receives at its leave; its own enter precedes its leave,
// so an instance whose members all left has all its enters.
void OpenMpWaits::barrier_event(std::uint32_t loc, std::uint32_t region, std::int64_t t, Role role,
                                const Key& key) {
  Barrier& b = barriers_[key];
  if (role == Role::Contribute) {
    b.members.push_back({loc, region, t});
    return;
  }
  for (Member& m : b.members)
    if (m.loc == loc && m.leave == kNotLeft) {
      m.leave = t;
      ++b.left;
      break;
    }
  const std::size_t n = team_size(key.second.a);
  if (n == 0 || b.left < n) return;
  evaluate(key, b);
  barriers_.erase(key);
}

// Scalasca: each member waits from its enter until the last member entered, bounded by its own
// time in the barrier; the last to enter caused it.
void OpenMpWaits::evaluate(const Key& key, const Barrier& b) {
  if (b.members.size() < 2) return;
  // Of members entering at the same time, the first location is the last to enter.
  const Member& last =
      *std::max_element(b.members.begin(), b.members.end(), [](const Member& x, const Member& y) {
        return x.enter < y.enter || (x.enter == y.enter && x.loc > y.loc);
      });
  const auto team = static_cast<std::uint32_t>(key.second.a);
  for (const Member& m : b.members) {
    if (m.leave == kNotLeft) continue;
    const std::int64_t wait = std::min(last.enter, m.leave) - m.enter;
    if (wait <= 0) continue;
    add(omp_barrier_pattern(layout_.regions, m.region), m.loc, last.loc, m.region, team, m.enter,
        wait);
  }
}

// The waiting call is a critical construct or a lock routine (pattern_rules.h): the region open
// around the acquisition (Score-P's lock routines, every critical) or the one the thread has just
// left (htrace's lock routines). Elsewhere (omp_test_lock, which returns at once) nothing waits.
void OpenMpWaits::lock_event(std::uint32_t loc, std::int64_t t, Role role, const Key& key) {
  Handover& h = handovers_[key];
  if (role == Role::Contribute) {
    h.release.emplace(loc, t);
  } else {
    const Thread& th = threads_[loc];
    auto waits_in = [&](const Frame& f) {
      return f.openmp && omp_lock_pattern(layout_.regions, f.region).has_value();
    };
    const Frame* f = nullptr;
    if (!th.stack.empty() && waits_in(th.stack.top()))
      f = &th.stack.top();
    else if (th.left && waits_in(*th.left))
      f = &*th.left;
    // Without a waiting region the hand-over is still completed, so that its release is not held.
    const std::uint32_t team = th.teams.empty() ? kNoComm : th.teams.back();
    h.acquire =
        f ? Acquire{loc, f->region, team, f->enter, t} : Acquire{loc, kNoRegion, team, t, t};
  }
  if (!h.release || !h.acquire) return;
  evaluate(h);
  handovers_.erase(key);
}

// From the acquiring call's enter to the previous holder's release, bounded by the acquisition.
void OpenMpWaits::evaluate(const Handover& h) {
  const Acquire& a = *h.acquire;
  if (a.region == kNoRegion) return;
  const std::int64_t wait = std::min(h.release->second, a.acquired) - a.enter;
  if (wait <= 0) return;
  add(*omp_lock_pattern(layout_.regions, a.region), a.loc, h.release->first, a.region, a.team,
      a.enter, wait);
}

void OpenMpWaits::add(WaitPattern pattern, std::uint32_t loc, std::uint32_t cause,
                      std::uint32_t region, std::uint32_t comm, std::int64_t enter,
                      std::int64_t wait) {
  PatternTime& p = results_.patterns[static_cast<std::size_t>(pattern)];
  p.total_ns += wait;
  ++p.calls;
  p.longest_ns = std::max(p.longest_ns, wait);
  p.by_location[loc] += wait;
  p.caused_by[cause] += wait;
  p.by_region[region] += wait;
  p.by_comm[comm] += wait;
  if (observer_) observer_({loc, region, enter, pattern, wait, cause});
}

void OpenMpWaits::tick(std::uint32_t loc, std::int64_t t) {
  Thread& th = threads_[loc];
  if (th.first == kNotLeft) {
    th.first = th.last = t;
    return;
  }
  if (th.forks == 0 && th.teams.empty() && t > th.last) {
    th.serial_ns += t - th.last;
    if (!th.alone_in_process)
      th.add_serial(th.stack.empty() ? kNoRegion : th.stack.top().region, t - th.last);
  }
  th.last = std::max(th.last, t);
}

void OpenMpWaits::prefetch(std::uint32_t loc) const {
  const Thread& th = threads_[loc];
  relations::prefetch_span(&th, reinterpret_cast<const char*>(&th.omp) + 64);
}

void OpenMpWaits::Thread::add_serial(std::uint32_t region, std::int64_t ns) {
  for (auto& [r, total] : serial)
    if (r == region) {
      total += ns;
      return;
    }
  serial.emplace_back(region, ns);
}

// Scalasca's Idle Threads: each worker thread of a process (a location that was a member of a
// team, not the master) is idle while the master runs serial code, from the master's first event
// to its last; split by the master's innermost region then.
void OpenMpWaits::idle_threads() {
  std::map<std::uint32_t, std::uint32_t> master_of; // process -> its first master
  for (std::uint32_t loc = 0; loc < threads_.size(); ++loc)
    if (threads_[loc].master) master_of.try_emplace(layout_.process_of[loc], loc);
  for (std::uint32_t loc = 0; loc < threads_.size(); ++loc) {
    auto m = master_of.find(layout_.process_of[loc]);
    if (m == master_of.end() || m->second == loc || !threads_[loc].member) continue;
    const Thread& master = threads_[m->second];
    if (master.serial_ns <= 0) continue;
    PatternTime& p = results_.patterns[static_cast<std::size_t>(WaitPattern::OmpIdleThreads)];
    p.total_ns += master.serial_ns;
    ++p.calls;
    p.longest_ns = std::max(p.longest_ns, master.serial_ns);
    p.by_location[loc] += master.serial_ns;
    p.caused_by[m->second] += master.serial_ns;
    for (const auto& [region, ns] : master.serial)
      p.by_region[region] += ns;
    p.by_comm[kNoComm] += master.serial_ns;
  }
}

void OpenMpWaits::finish() {
  idle_threads();
  for (const auto& [key, b] : barriers_)
    evaluate(key, b);
  barriers_.clear();
  handovers_.clear();
}

} // namespace htrace::analysis::detail
