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
                               std::ostream& out)
    : MatchingSink(defs), defs_(defs), metrics_(metrics), out_(out), stacks_(defs.locations.size()),
      tid_(defs.locations.size()), coll_count_(defs.locations.size()) {
  out_ << "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"htrace-report\","
          "\"time_origin_ns\":"
       << defs_.global_offset << ",\"ticks_per_second\":" << defs_.resolution
       << ",\"note\":\"ts and dur are microseconds from the trace start with 3 decimals: exact "
          "nanoseconds; pid = rank + 1, tid = location index + 1\"},\n\"traceEvents\":[\n";
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
}

void PerfettoExport::begin_record() {
  if (!first_) out_ << ",\n";
  first_ = false;
}

void PerfettoExport::ids(std::uint32_t loc) {
  out_ << ",\"pid\":" << defs_.processes[defs_.locations[loc].process].group_id + 1
       << ",\"tid\":" << tid_[loc];
}

std::uint64_t PerfettoExport::anchor_time(std::uint32_t loc, std::uint64_t t) const {
  return stacks_[loc].empty() ? t : stacks_[loc].back().start;
}

void PerfettoExport::enter(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  stacks_[loc].push_back({region, t});
}

void PerfettoExport::leave(std::uint32_t loc, std::uint64_t t, std::uint32_t region) {
  auto& stack = stacks_[loc];
  if (stack.empty()) return; // a Leave without its Enter: nothing to draw
  const Open open = stack.back();
  stack.pop_back();
  (void)region;
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
  counts_.records_drawn += 2;
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

void PerfettoExport::send(std::uint32_t loc, std::uint64_t t, std::uint32_t comm,
                          std::uint32_t peer, std::uint32_t tag, std::uint64_t,
                          std::uint64_t request) {
  // A receiver not in the definitions: no arrow.
  ends_.send(loc, comm, peer, tag, request, {loc, anchor_time(loc, t)}, matched_ends());
}

void PerfettoExport::recv(std::uint32_t loc, std::uint64_t t, std::uint32_t comm,
                          std::uint32_t peer, std::uint32_t tag, std::uint64_t,
                          std::uint64_t request) {
  ends_.recv(loc, comm, peer, tag, request, {loc, anchor_time(loc, t)}, matched_ends());
}

void PerfettoExport::matched_end(const relations::MessageEnd<FlowEnd>& end) {
  const relations::ChannelNumbers::Number n = numbers_.number(end);
  // channel in the high bits, message number in the low 32: unique while a channel carries fewer
  // than 2^32 messages and there are fewer than 2^30 channels.
  const std::uint64_t id = (n.channel << 32) | (n.k & 0xffffffffu);
  flow(end.side == P2pSide::Send ? 's' : 'f', end.what.loc, end.what.anchor, id, "message");
  ++counts_.records_drawn;
}

void PerfettoExport::collective(std::uint32_t loc, std::uint64_t t, std::uint8_t,
                                std::uint32_t comm, std::uint32_t root, std::uint64_t,
                                std::uint64_t) {
  auto c = defs_.comms.find(comm);
  if (c == defs_.comms.end() || c->second.members.size() < 2) return;
  const auto& members = c->second.members;
  const std::uint64_t k = coll_count_[loc].next(comm);
  auto [it, inserted] = instances_.try_emplace({comm, k}, Instance{next_instance_});
  if (inserted) ++next_instance_;
  const std::uint64_t instance = it->second.number;
  if (++it->second.seen == members.size()) instances_.erase(it);
  // This location's rank in the communicator, and the flows' source rank.
  std::uint32_t me = 0;
  while (me < members.size() && members[me] != loc)
    ++me;
  if (me == members.size()) return; // a thread that is not the rank's MPI location
  const std::uint32_t source = root == OTF2_UNDEFINED_UINT32 || root >= members.size() ? 0 : root;
  ++counts_.records_drawn;
  if (me == source) {
    for (std::uint32_t r = 0; r < members.size(); ++r)
      if (r != source)
        flow('s', loc, anchor_time(loc, t), collective_id(instance, r), "collective");
  } else {
    flow('f', loc, anchor_time(loc, t), collective_id(instance, me), "collective");
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
  auto it = metrics_.metrics.find(metric);
  if (it == metrics_.metrics.end() || it->second.size() != n) {
    counts_.values_undefined += n;
    return;
  }
  bool drawn = false;
  for (std::uint8_t i = 0; i < n; ++i) {
    auto member = metrics_.members.find(it->second[i]);
    if (member == metrics_.members.end()) {
      ++counts_.values_undefined;
      continue;
    }
    const std::string value =
        metric_value_json(types[i], values[i], member->second.base, member->second.exponent);
    if (value.empty()) {
      ++counts_.values_not_finite;
      continue;
    }
    begin_record();
    out_ << "{\"ph\":\"C\",\"name\":" << counter_name(loc, it->second[i]);
    ids(loc);
    out_ << ",\"ts\":";
    write_us(out_, defs_.ns_from_start(t));
    out_ << ",\"args\":{\"value\":" << value << "}}";
    ++counts_.counter_values;
    drawn = true;
  }
  if (drawn) ++counts_.records_drawn;
}

void PerfettoExport::finish() {
  ends_.finish(matched_ends());
  out_ << "\n]}\n";
}

} // namespace htrace::report
