#include "trace_builder.h"

#include <algorithm>
#include <string>

namespace htrace::correct::testing {
namespace {

constexpr uint64_t kWorld = 0; // the communicator of every message and collective

// Sub-kinds of the OpenMP channels (the key only needs to be unique within the process).
enum : uint64_t { kFork = 1, kJoin = 2 };

ChannelKey p2p_stream(uint32_t src, uint32_t dst, uint32_t tag) {
  return {ChannelType::P2P, src, dst, kWorld << 32 | tag, 0};
}

} // namespace

uint32_t TraceBuilder::process(std::vector<int64_t> times, uint64_t node) {
  const auto p = static_cast<uint32_t>(defs_.processes.size());
  ProcessInfo& info = defs_.processes.emplace_back();
  info.id = p;
  info.node = node;
  CommInfo& world = defs_.comms[kWorld];
  world.process_rank[p] = static_cast<uint32_t>(world.rank_process.size());
  world.rank_process.push_back(p);
  world.paradigm = OTF2_PARADIGM_MPI;
  times_.emplace_back(std::move(times));
  const auto li = static_cast<uint32_t>(times_.size() - 1);
  LocationInfo& loc = defs_.locations.emplace_back();
  loc.id = li, loc.process = p;
  loc.declared_events = times_.back().size();
  loc.name = "process " + std::to_string(p);
  defs_.location_index[li] = li;
  info.locations.push_back(li);
  info.events += loc.declared_events;
  links_.emplace_back();
  return li;
}

uint32_t TraceBuilder::thread(uint32_t of, std::vector<int64_t> times) {
  const uint32_t p = defs_.locations[of].process;
  ProcessInfo& info = defs_.processes[p];
  times_.emplace_back(std::move(times));
  const auto li = static_cast<uint32_t>(times_.size() - 1);
  LocationInfo& loc = defs_.locations.emplace_back();
  loc.id = li, loc.process = p;
  loc.declared_events = times_.back().size();
  loc.name = "process " + std::to_string(p) + " thread " + std::to_string(info.locations.size());
  defs_.location_index[li] = li;
  info.locations.push_back(li);
  info.events += loc.declared_events;
  links_.emplace_back();
  return li;
}

void TraceBuilder::message(uint32_t from, uint32_t send, uint32_t to, uint32_t recv, uint32_t tag) {
  const ChannelKey stream =
      p2p_stream(defs_.locations[from].process, defs_.locations[to].process, tag);
  add(from, {send, LinkRole::Contribute, stream, MessageKind::P2P, 0});
  add(to, {recv, LinkRole::Receive, stream, MessageKind::P2P, 0});
}

void TraceBuilder::receive_only(uint32_t from, uint32_t to, uint32_t recv, uint32_t tag) {
  add(to, {recv, LinkRole::Receive,
           p2p_stream(defs_.locations[from].process, defs_.locations[to].process, tag),
           MessageKind::P2P, 0});
}

void TraceBuilder::send_only(uint32_t from, uint32_t send, uint32_t to, uint32_t tag) {
  add(from, {send, LinkRole::Contribute,
             p2p_stream(defs_.locations[from].process, defs_.locations[to].process, tag),
             MessageKind::P2P, 0});
}

void TraceBuilder::collective(format::CollectivePattern pattern, std::vector<Member> members,
                              uint32_t root) {
  const auto instance = static_cast<uint32_t>(collectives_.size());
  collectives_.push_back({pattern, root});
  const ChannelKey key{ChannelType::Collective, kWorld, instance, 0, 0};
  for (const Member& m : members) {
    add(m.location, {m.begin, LinkRole::Contribute, key, MessageKind::Collective, instance});
    add(m.location, {m.end, LinkRole::Receive, key, MessageKind::Collective, instance});
  }
}

void TraceBuilder::parallel(Event fork, Event join, std::vector<Event> begins,
                            std::vector<Event> ends) {
  const uint64_t process = defs_.locations[fork.location].process;
  const uint64_t region = regions_++;
  const ChannelKey fork_key{ChannelType::Local, process << 8 | kFork, region, 0, 0};
  const ChannelKey join_key{ChannelType::Local, process << 8 | kJoin, region, 0, 0};
  add(fork.location, {fork.event, LinkRole::Contribute, fork_key, MessageKind::OpenMP, 0});
  for (const Event& b : begins)
    add(b.location, {b.event, LinkRole::Receive, fork_key, MessageKind::OpenMP, 0});
  for (const Event& e : ends)
    add(e.location, {e.event, LinkRole::Contribute, join_key, MessageKind::OpenMP, 0});
  add(join.location, {join.event, LinkRole::Receive, join_key, MessageKind::OpenMP, 0});
}

LocalModel TraceBuilder::model(const std::vector<int>& owner, int rank) const {
  LocalModel m;
  for (uint32_t p = 0; p < defs_.processes.size(); ++p) {
    if (owner[p] != rank) continue;
    for (uint32_t li : defs_.processes[p].locations) {
      LocationModel& loc = m.locations.emplace_back();
      loc.location = li, loc.process = p;
      for (int64_t t : times_[li])
        loc.input.push_back(t);
      m.events += loc.input.size();
      std::vector<LinkSpec> specs = links_[li];
      std::stable_sort(specs.begin(), specs.end(),
                       [](const LinkSpec& a, const LinkSpec& b) { return a.event < b.event; });
      for (const LinkSpec& s : specs) {
        uint32_t id = 0;
        if (s.key.type == ChannelType::P2P) {
          P2PStream& st = m.channels.stream(s.key.a, s.key.b, s.key.c);
          id = m.channels.p2p(st, s.role == LinkRole::Contribute ? st.counts.sends++
                                                                 : st.counts.receives++);
        } else {
          id = m.channels.get(s.key, s.kind);
          Channel& ch = m.channels.channels[id];
          if (s.key.type == ChannelType::Collective && ch.slot == UINT32_MAX) {
            ch.slot = static_cast<uint32_t>(m.collectives.size());
            CollectiveInstance& c = m.collectives.emplace_back();
            c.pattern = collectives_[s.collective].pattern;
            c.root = collectives_[s.collective].root;
            c.members = static_cast<uint32_t>(defs_.processes.size());
            c.channel = id;
          }
        }
        add_link(loc, s.event, s.role, id, m);
      }
      // Event order, receives first within an event (as the model reader sorts them).
      std::stable_sort(loc.links.begin(), loc.links.end(), [](const Link& a, const Link& b) {
        return a.event != b.event ? a.event < b.event : a.role() < b.role();
      });
    }
  }
  return m;
}

} // namespace htrace::correct::testing
