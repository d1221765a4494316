#include "profile.h"

#include <algorithm>

namespace htrace::report {

Profile::Profile(const ArchiveDefs& defs, const ProfileOptions& options)
    : MatchingSink(defs), scale(report_scale(defs)), per_location(defs.locations.size()),
      matrix_messages(scale.matrix_side() * scale.matrix_side()),
      matrix_bytes(scale.matrix_side() * scale.matrix_side()),
      mpi_share(scale.overview_rows(), std::vector<double>(std::max<std::size_t>(options.bins, 1))),
      defs_(defs), options_(options), locations_(defs.locations.size()),
      channel_numbers_(defs.locations.size()) {
  const auto length = static_cast<std::int64_t>(
      defs.resolution == 1000000000 ? defs.trace_length
                                    : defs.ns_from_start(defs.global_offset + defs.trace_length));
  const auto nbins = static_cast<std::int64_t>(mpi_share.empty() ? 1 : mpi_share[0].size());
  bin_ns = std::max<std::int64_t>(1, (length + nbins - 1) / nbins);
  window_begin_ns = 0;
  window_end_ns = length;
  if (options.window_begin_ns >= 0) {
    window_begin_ns = options.window_begin_ns;
    window_end_ns = options.window_end_ns;
  } else {
    init_finalize_window(defs, window_begin_ns, window_end_ns);
  }
}

// htrace measures the clocks at the end of MPI_Init and the start of MPI_Finalize: between them
// runs the program's own work (MPI_Init alone can outlast the whole computation of a short run).
bool init_finalize_window(const ArchiveDefs& defs, std::int64_t& begin_ns, std::int64_t& end_ns) {
  std::int64_t init = -1, final = -1;
  for (const Location& l : defs.locations) {
    auto i = l.properties.find("HTRACE::CLOCK::INIT_TIME");
    auto f = l.properties.find("HTRACE::CLOCK::FINAL_TIME");
    if (i == l.properties.end() || f == l.properties.end()) continue;
    const std::int64_t a = defs.ns_from_start(static_cast<std::uint64_t>(i->second));
    const std::int64_t b = defs.ns_from_start(static_cast<std::uint64_t>(f->second));
    init = std::max(init, a);
    final = final < 0 ? b : std::min(final, b);
  }
  if (init < 0 || final <= init) return false;
  begin_ns = init;
  end_ns = final;
  return true;
}

void Profile::touch(std::int64_t ns) {
  if (!seen_any) first_ns = last_ns = ns;
  seen_any = true;
  first_ns = std::min(first_ns, ns);
  last_ns = std::max(last_ns, ns);
}

RegionStats* Profile::innermost(std::uint32_t loc) {
  const auto& stack = locations_[loc].stack;
  return stack.empty() ? nullptr : &stats(loc, stack.top().region);
}

RegionStats& Profile::stats(std::uint32_t loc, std::uint32_t region) {
  auto& regions = locations_[loc].regions;
  for (auto& [r, s] : regions)
    if (r == region) return s;
  return regions.emplace_back(region, RegionStats{}).second;
}

void Profile::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  touch(defs_.ns_from_start(t));
  locations_[loc].stack.push({region, t});
}

void Profile::add_mpi_time(std::uint32_t loc, std::int64_t from, std::int64_t to) {
  auto& bins = mpi_share[loc / scale.location_block];
  const auto n = static_cast<std::int64_t>(bins.size());
  from = std::max<std::int64_t>(from, 0);
  while (from < to) {
    const std::int64_t b = std::min(from / bin_ns, n - 1);
    const std::int64_t end = b == n - 1 ? to : std::min(to, (b + 1) * bin_ns);
    bins[b] += static_cast<double>(end - from);
    from = end;
  }
}

void Profile::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t) {
  const std::int64_t ns = defs_.ns_from_start(t);
  touch(ns);
  auto& stack = locations_[loc].stack;
  if (stack.empty()) return;
  const Open open = stack.top();
  stack.pop();
  std::vector<WaitMark> marks;
  if (!open_marks_.empty()) {
    if (auto m = open_marks_.find({loc, stack.size()}); m != open_marks_.end()) {
      marks = std::move(m->second);
      open_marks_.erase(m);
    }
  }
  const std::int64_t start = defs_.ns_from_start(open.start);
  RegionStats& s = stats(loc, open.region);
  ++s.calls;
  s.time_ns += static_cast<std::uint64_t>(std::max<std::int64_t>(0, ns - start));
  auto r = defs_.regions.find(open.region);
  const bool mpi = r != defs_.regions.end() && r->second.cls.mpi();
  if (mpi) add_mpi_time(loc, start, ns);
  if (ns >= window_begin_ns && start <= window_end_ns && scale.in_detail[loc]) {
    ++detail_total_slices;
    longest_.push({loc, open.region, start, ns - start});
    Kept& k = kept_[{loc, start, open.region}];
    ++k.copies;
    k.marks.insert(k.marks.end(), marks.begin(), marks.end());
    if (longest_.size() > options_.max_slices) {
      const DetailSlice& out = longest_.top();
      auto it = kept_.find({out.loc, out.start_ns, out.region});
      if (it != kept_.end() && --it->second.copies == 0) kept_.erase(it);
      longest_.pop();
    }
  }
}

// A wait is decided after its call has left, or (OpenMP lock acquisitions) while it is open; a
// slice dropped from the detail never comes back, so neither do its waits.
void Profile::wait(const analysis::WaitStateAnalysis::CallWait& w) {
  const WaitMark mark{w.pattern, w.wait_ns, w.cause};
  auto it = kept_.find({w.loc, w.enter, w.region});
  if (it != kept_.end()) {
    it->second.marks.push_back(mark);
    return;
  }
  if (w.loc >= locations_.size()) return;
  const auto& stack = locations_[w.loc].stack;
  for (std::size_t depth = 0; depth < stack.size(); ++depth)
    if (const Open& o = stack[depth];
        o.region == w.region && defs_.ns_from_start(o.start) == w.enter) {
      open_marks_[{w.loc, depth}].push_back(mark);
      return;
    }
}

const std::vector<WaitMark>* Profile::marks_of(const DetailSlice& s) const {
  auto it = kept_.find({s.loc, s.start_ns, s.region});
  return it == kept_.end() || it->second.marks.empty() ? nullptr : &it->second.marks;
}

void Profile::pair(const P2pChannel& channel, const ProfiledEnd& s, const ProfiledEnd& r) {
  ++matched;
  const bool within = channel.src == channel.dst;
  matched_within_process += within;
  const std::uint64_t seen = std::max(s.seen, r.seen);
  const std::int64_t early = s.t - r.t;
  if (early > 0) {
    ++violations;
    violations_within_process += within;
    if (early > worst_violation_ns || (early == worst_violation_ns && seen < worst_seen_)) {
      worst_violation_ns = early;
      worst_seen_ = seen;
      worst = {s.record.loc, r.record.loc, s.t, r.t, s.bytes};
      worst_channel = channel;
      worst_index = s.index;
      worst_send = s.record;
      worst_recv = r.record;
    }
  }
  if (r.t >= window_begin_ns && s.t <= window_end_ns && scale.in_detail[s.record.loc] &&
      scale.in_detail[r.record.loc]) {
    ++detail_total_messages;
    first_details_.push({seen, {s.record.loc, r.record.loc, s.t, r.t, s.bytes}});
    if (first_details_.size() > options_.max_messages) first_details_.pop();
  }
}

ProfiledEnd Profile::pending(std::uint32_t loc, std::uint64_t t, std::uint64_t bytes) {
  const std::int64_t ns = defs_.ns_from_start(t);
  touch(ns);
  return {{loc, locations_[loc].p2p_records++}, ns, bytes, seen_++, 0};
}

void Profile::send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
                   std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) {
  const ProfiledEnd mine = pending(loc, t, bytes);
  if (RegionStats* s = innermost(loc)) s->bytes_sent += bytes;
  if (!ends_.send(loc, comm, peer, tag, request, mine, matched_ends())) ++messages, ++unmatched;
}

void Profile::recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm, std::uint32_t peer,
                   std::uint32_t tag, std::uint64_t bytes, std::uint64_t request) {
  const ProfiledEnd mine = pending(loc, t, bytes);
  if (RegionStats* s = innermost(loc)) s->bytes_received += bytes;
  ends_.recv(loc, comm, peer, tag, request, mine, matched_ends());
}

// A send counts as a message (matrix included) once it is known not to be cancelled.
void Profile::matched_end(const relations::MessageEnd<ProfiledEnd>& end) {
  const P2pChannel& channel = end.channel;
  const std::uint32_t number = channel_numbers_.find_or_add(end.what.record.loc, end.side, channel);
  if (number == channels_.size()) channels_.emplace_back();
  Queues& q = channels_[number];
  if (end.side == P2pSide::Send) {
    ++messages;
    const std::size_t cell =
        channel.src / scale.rank_block * scale.matrix_side() + channel.dst / scale.rank_block;
    ++matrix_messages[cell];
    matrix_bytes[cell] += end.what.bytes;
    ProfiledEnd mine = end.what;
    mine.index = q.sent++;
    if (!q.recvs.empty()) { // its receive was recorded earlier: a violation
      pair(channel, mine, q.recvs.front());
      q.recvs.pop_front();
    } else {
      q.sends.push_back(mine);
    }
  } else if (!q.sends.empty()) {
    pair(channel, q.sends.front(), end.what);
    q.sends.pop_front();
  } else {
    q.recvs.push_back(end.what);
  }
}

void Profile::collective(std::uint32_t loc, std::uint64_t t, std::uint8_t, std::uint32_t,
                         std::uint32_t, std::uint64_t sent, std::uint64_t received) {
  touch(defs_.ns_from_start(t));
  if (RegionStats* s = innermost(loc)) {
    s->bytes_sent += sent;
    s->bytes_received += received;
  }
}

void Profile::finish() {
  ends_.finish(matched_ends());
  for (std::size_t loc = 0; loc < locations_.size(); ++loc)
    per_location[loc].insert(locations_[loc].regions.begin(), locations_[loc].regions.end());
  detail_messages.resize(first_details_.size());
  for (std::size_t i = first_details_.size(); i-- > 0; first_details_.pop())
    detail_messages[i] = first_details_.top().message;
  for (const Queues& q : channels_)
    unmatched += q.sends.size() + q.recvs.size();
  for (std::size_t row = 0; row < mpi_share.size(); ++row) {
    const std::size_t first = row * scale.location_block;
    const auto n = std::min(scale.location_block, defs_.locations.size() - first);
    for (double& b : mpi_share[row])
      b /= static_cast<double>(bin_ns) * static_cast<double>(n);
  }
  detail.reserve(longest_.size());
  while (!longest_.empty()) {
    detail.push_back(longest_.top());
    longest_.pop();
  }
  std::sort(detail.begin(), detail.end(), [](const DetailSlice& a, const DetailSlice& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.dur_ns > b.dur_ns;
  });
}

} // namespace htrace::report
