#include "perfetto_export.h"

#include "json_text.h"
#include "metric_value.h"

#include <otf2/otf2.h>

namespace htrace::report {
namespace {

const char* category(const ArchiveDefs& defs, std::uint32_t region) {
  auto it = defs.regions.find(region);
  if (it == defs.regions.end()) return "other";
  return it->second.cls.mpi() ? "MPI" : it->second.cls.openmp() ? "OpenMP" : "user";
}

std::string region_name(const ArchiveDefs& defs, std::uint32_t region) {
  auto it = defs.regions.find(region);
  return it == defs.regions.end() ? "region " + std::to_string(region) : it->second.name;
}

// Collective flows live above 2^62 so they never share an id with a message (message ids stay
// below 2^62); the member's comm rank is in the low 20 bits.
constexpr std::uint64_t kCollectiveBase = std::uint64_t{1} << 62;
std::uint64_t collective_id(std::uint64_t instance, std::uint32_t member) {
  return kCollectiveBase | (instance << 20) | (member & 0xfffffu);
}

} // namespace

PerfettoExport::PerfettoExport(const ArchiveDefs& defs, const MetricDefs& metrics,
                               std::ostream& out, const ExportLimits& limits)
    : MatchingSink(defs), defs_(defs), comms_(defs.comms), metrics_(metrics), out_(out),
      stacks_(defs.locations.size()), tid_(defs.locations.size()), numbers_(defs.locations.size()),
      coll_count_(defs.locations.size()), selection_(limits) {
  // displayTimeUnit first: Perfetto looks for it in the first chunk of the file. otherData comes
  // last, when what was left out is known.
  out_ << "{\"displayTimeUnit\":\"ns\",\n\"traceEvents\":[\n";
  // pid/tid 0 mean "idle/kernel" to some viewers: ranks and locations are numbered from 1.
  for (std::size_t p = 0; p < defs_.processes.size(); ++p) {
    const Process& proc = defs_.processes[p];
    const std::uint64_t pid = proc.group_id + 1;
    begin_record();
    out_ << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << pid
         << ",\"args\":{\"name\":" << json_string(proc.name) << "}}";
    begin_record();
    out_ << "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << pid
         << ",\"args\":{\"sort_index\":" << proc.group_id << "}}";
    for (std::uint32_t li : proc.locations) {
      tid_[li] = li + 1;
      begin_record();
      out_ << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << pid << ",\"tid\":" << tid_[li]
           << ",\"args\":{\"name\":"
           << json_string(defs_.locations[li].name + " (location " +
                          std::to_string(defs_.locations[li].id) + ")")
           << "}}";
    }
  }
  selection_.count(counts_.trace_events);
}

void PerfettoExport::begin_record() {
  if (!first_) out_ << ",\n";
  first_ = false;
  ++counts_.trace_events;
}

std::int64_t PerfettoExport::advance(std::uint64_t t) {
  const std::int64_t ns = defs_.ns_from_start(t);
  if (selection_.reaches_window(ns))
    for (auto& stack : stacks_)
      for (Open& open : stack)
        if (open.verdict == Verdict::BeforeWindow) open.verdict = selection_.open();
  return ns;
}

void PerfettoExport::ids(std::uint32_t loc) {
  out_ << ",\"pid\":" << defs_.processes[defs_.locations[loc].process].group_id + 1
       << ",\"tid\":" << tid_[loc];
}

std::uint64_t PerfettoExport::anchor_time(std::uint32_t loc, std::uint64_t t) const {
  return stacks_[loc].empty() ? t : stacks_[loc].back().start;
}

void PerfettoExport::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  stacks_[loc].push_back({region, t, selection_.take(advance(t))});
}

void PerfettoExport::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  advance(t);
  auto& stack = stacks_[loc];
  if (stack.empty()) return; // a Leave without its Enter: nothing to draw
  const Open open = stack.back();
  stack.pop_back();
  (void)region;
  counts_.records_drawn += 2;
  if (open.verdict != Verdict::Kept) {
    selection_.left_out(open.verdict, &LeftOut::slices);
    return;
  }
  begin_record();
  out_ << "{\"ph\":\"X\",\"name\":" << json_string(region_name(defs_, open.region)) << ",\"cat\":\""
       << category(defs_, open.region) << "\"";
  ids(loc);
  out_ << ",\"ts\":";
  write_us(out_, defs_.ns_from_start(open.start));
  out_ << ",\"dur\":";
  write_us(out_, defs_.ns_from_start(t) - defs_.ns_from_start(open.start));
  out_ << "}";
  ++counts_.slices;
}

void PerfettoExport::flow(char phase, std::uint32_t loc, std::uint64_t anchor, std::uint64_t id,
                          const char* cat) {
  begin_record();
  out_ << "{\"ph\":\"" << phase << "\",\"name\":\"" << cat << "\",\"cat\":\"" << cat
       << "\",\"id\":" << id;
  if (phase == 'f') out_ << ",\"bp\":\"e\""; // bind to the enclosing slice, not the next one
  ids(loc);
  out_ << ",\"ts\":";
  write_us(out_, defs_.ns_from_start(anchor));
  out_ << "}";
  if (phase == 's') ++counts_.flows;
}

void PerfettoExport::offer(std::uint64_t id, char phase, const char* cat, const FlowEnd& end) {
  auto [it, first] = pending_flows_.try_emplace(id, PendingFlow{phase, cat, end});
  if (first) return;
  const PendingFlow other = it->second;
  pending_flows_.erase(it);
  const Verdict a = other.end.verdict, b = end.verdict;
  if (a == Verdict::Kept && b == Verdict::Kept) {
    const bool this_starts = phase == 's';
    const FlowEnd& s = this_starts ? end : other.end;
    const FlowEnd& f = this_starts ? other.end : end;
    flow('s', s.loc, s.anchor, id, cat);
    flow('f', f.loc, f.anchor, id, cat);
    return;
  }
  // Left out by the window if either end is outside it, else by the cap.
  const Verdict why = a == Verdict::Kept       ? b
                      : b == Verdict::Kept     ? a
                      : a == Verdict::AfterCut ? b
                                               : a;
  selection_.left_out(why, &LeftOut::flows);
}

void PerfettoExport::send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm,
                          std::uint32_t peer, std::uint32_t tag, std::uint64_t,
                          std::uint64_t request) {
  // A receiver not in the definitions: no arrow.
  const Verdict v = selection_.take(advance(t));
  ends_.send(loc, comm, peer, tag, request, {loc, anchor_time(loc, t), v}, matched_ends());
}

void PerfettoExport::recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm,
                          std::uint32_t peer, std::uint32_t tag, std::uint64_t,
                          std::uint64_t request) {
  const Verdict v = selection_.take(advance(t));
  ends_.recv(loc, comm, peer, tag, request, {loc, anchor_time(loc, t), v}, matched_ends());
}

void PerfettoExport::matched_end(const relations::MessageEnd<FlowEnd>& end) {
  const relations::ChannelNumbers::Number n = numbers_.number(end.what.loc, end);
  // channel in the high bits, message number in the low 32: unique while a channel carries fewer
  // than 2^32 messages and there are fewer than 2^30 channels.
  const std::uint64_t id = (n.channel << 32) | (n.k & 0xffffffffu);
  const bool second = pending_flows_.count(id) != 0;
  offer(id, end.side == P2pSide::Send ? 's' : 'f', "message", end.what);
  if (second) counts_.records_drawn += 2; // a matched pair; an end left alone is not drawn
}

void PerfettoExport::collective(std::uint32_t loc, std::uint64_t t, std::uint8_t,
                                std::uint32_t comm, std::uint32_t root, std::uint64_t,
                                std::uint64_t) {
  const std::int64_t ns = advance(t);
  const Comm* c = comms_.find(comm);
  if (!c || c->members.size() < 2) return;
  const auto& members = c->members;
  const std::uint64_t k = coll_count_[loc].next(comm);
  auto [it, inserted] = instances_.try_emplace({comm, k}, Instance{next_instance_});
  if (inserted) ++next_instance_;
  const std::uint64_t instance = it->second.number;
  if (++it->second.seen == members.size()) instances_.erase(it);
  // This location's rank in the communicator, and the flows' source rank.
  const auto me = static_cast<std::uint32_t>(
      ranks_.rank(comm, members.size(), loc, [&](std::size_t r) { return members[r]; }));
  if (me == members.size()) return; // a thread that is not the rank's MPI location
  const std::uint32_t source = root == OTF2_UNDEFINED_UINT32 || root >= members.size() ? 0 : root;
  ++counts_.records_drawn;
  const FlowEnd end{loc, anchor_time(loc, t),
                    selection_.take(ns, me == source ? members.size() - 1 : 1)};
  if (me == source) {
    for (std::uint32_t r = 0; r < members.size(); ++r)
      if (r != source) offer(collective_id(instance, r), 's', "collective", end);
  } else {
    offer(collective_id(instance, me), 'f', "collective", end);
  }
}

const std::string& PerfettoExport::counter_name(std::uint32_t loc, OTF2_MetricMemberRef member) {
  auto [it, inserted] = counter_names_.try_emplace({loc, member});
  if (inserted) {
    const MetricMember& m = metrics_.members.at(member);
    const Location& l = defs_.locations[loc];
    it->second = json_string(l.name + " (location " + std::to_string(l.id) + "): " + m.name +
                             (m.unit.empty() ? "" : " [" + m.unit + "]"));
  }
  return it->second;
}

void PerfettoExport::metric(std::uint32_t loc, std::uint64_t t, std::uint32_t metric,
                            std::uint8_t n, const OTF2_Type* types,
                            const OTF2_MetricValue* values) {
  const std::int64_t ns = advance(t);
  auto it = metrics_.metrics.find(metric);
  if (it == metrics_.metrics.end() || it->second.size() != n) {
    counts_.values_undefined += n;
    return;
  }
  std::vector<std::pair<OTF2_MetricMemberRef, std::string>> drawn;
  for (std::uint8_t i = 0; i < n; ++i) {
    auto member = metrics_.members.find(it->second[i]);
    if (member == metrics_.members.end()) {
      ++counts_.values_undefined;
      continue;
    }
    std::string value =
        metric_value_json(types[i], values[i], member->second.base, member->second.exponent);
    if (value.empty()) {
      ++counts_.values_not_finite;
      continue;
    }
    drawn.emplace_back(it->second[i], std::move(value));
  }
  if (drawn.empty()) return;
  ++counts_.records_drawn;
  const Verdict v = selection_.take(ns, drawn.size());
  if (v != Verdict::Kept) {
    selection_.left_out(v, &LeftOut::counter_values, drawn.size());
    return;
  }
  for (const auto& [member, value] : drawn) {
    begin_record();
    out_ << "{\"ph\":\"C\",\"name\":" << counter_name(loc, member);
    ids(loc);
    out_ << ",\"ts\":";
    write_us(out_, ns);
    out_ << ",\"args\":{\"value\":" << value << "}}";
    ++counts_.counter_values;
  }
}

void PerfettoExport::finish() {
  ends_.finish(matched_ends());
  pending_flows_.clear(); // ends whose partner never came: not drawn
  counts_.left_out = left_out_line(selection_);
  out_ << "\n],\n";
  other_data();
  out_ << "}\n";
}

void PerfettoExport::other_data() {
  const ExportLimits& l = selection_.limits();
  out_ << "\"otherData\":{\"generator\":\"htrace-report\",\"time_origin_ns\":"
       << defs_.global_offset << ",\"ticks_per_second\":" << defs_.resolution
       << ",\"note\":\"ts and dur are microseconds from the trace start with 3 decimals: exact "
          "nanoseconds; pid = rank + 1, tid = location index + 1\"";
  if (l.windowed())
    out_ << ",\"window_begin_ns\":" << l.begin_ns << ",\"window_end_ns\":" << l.end_ns;
  out_ << ",\"max_events\":" << l.max_events << ",\"trace_events\":" << counts_.trace_events;
  if (selection_.cut()) out_ << ",\"cut_ns\":" << selection_.cut_ns();
  const std::pair<const char*, const LeftOut*> rules[] = {
      {"outside_window", &selection_.outside_window()}, {"after_cut", &selection_.after_cut()}};
  for (const auto& [rule, n] : rules)
    out_ << ",\"" << rule << "_slices\":" << n->slices << ",\"" << rule << "_flows\":" << n->flows
         << ",\"" << rule << "_counter_values\":" << n->counter_values;
  out_ << ",\"left_out\":" << json_string(counts_.left_out) << "}";
}

} // namespace htrace::report
