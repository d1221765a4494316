// ClockPropSync (Algorithm 3) with the shared-clock check the reference implementation lacks, and
// the hierarchical schemes H2HCA (Algorithm 4) and H3HCA built from communicator splits.
#include "clock/algorithms.h"
#include "clock/offset.h"
#include "common/host_name.h"
#include "common/log.h"

#include <chrono>
#include <cstdlib>
#include <hwloc.h>
#include <string>
#include <thread>

namespace htrace::clock {

const char* verdict_name(ClockVerdict verdict) {
  switch (verdict) {
  case ClockVerdict::NotRun:
    return "";
  case ClockVerdict::Shared:
    return "shared";
  case ClockVerdict::Differs:
    return "differs";
  case ClockVerdict::Undecided:
    return "undecided";
  }
  return "?";
}

namespace {
// What the member sends the rank serving its check after each batch.
enum CheckReply : std::int64_t { kNotShared = 0, kShared = 1, kAnotherBatch = 2 };

/// The member's side of one shared-clock check against `server` (the leader or a member that
/// reads its clock): batches until the verdict is decided or kClockCheckBatches ran out.
bool check_clock_against(Transport& t, int server, const GlobalClock& base, const SyncConfig& c,
                         SyncContext& ctx, bool usable) {
  // A member that fails over the tree is checked again by the leader: the record keeps the last
  // check's verdict and bounds, and the batches of both.
  ClockCheck& check = ctx.stats.clock_check;
  check.verdict = ClockVerdict::NotRun;
  for (int batch = 1;; ++batch) {
    const OffsetMeasurement m =
        measure_offset_client(t, server, base, OffsetMethod::Skampi, c.check_pingpongs);
    ctx.note_rtt(m.min_rtt_ns);
    ++check.batches;
    if (batch == 1 || m.uncertainty_ns < check.measurement.uncertainty_ns) check.measurement = m;
    if (std::llabs(m.offset_ns) > m.uncertainty_ns + c.tolerance_ns) {
      check.measurement = m;
      check.verdict = ClockVerdict::Differs;
    } else if (m.uncertainty_ns <= c.resolution_ns) {
      check.verdict = ClockVerdict::Shared;
    } else if (batch == kClockCheckBatches) {
      check.verdict = ClockVerdict::Undecided;
    } else {
      t.send_i64(server, kAnotherBatch);
      // Off the core for a moment: the next batch starts on a fresh time slice, and a partner
      // waiting for this core runs meanwhile.
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    break;
  }
  const bool shared = usable && check.verdict == ClockVerdict::Shared;
  t.send_i64(server, shared ? kShared : kNotShared);
  return shared;
}
} // namespace

bool check_shared_clock(Transport& group, const GlobalClock& base, const SyncConfig& c,
                        SyncContext& ctx, bool usable) {
  return check_clock_against(group, 0, base, c, ctx, usable);
}

bool serve_shared_clock_check(Transport& group, int member, const GlobalClock& base) {
  for (;;) {
    serve_offset(group, member, base);
    const std::int64_t reply = group.recv_i64(member);
    if (reply != kAnotherBatch) return reply == kShared;
  }
}

namespace {
int highest_bit(int i) {
  int b = 1;
  while (b * 2 <= i)
    b *= 2;
  return b;
}

/// More ranks on this node than cores (Open MPI and MPICH tell the ranks per node): concurrent
/// checks would then compete for the cores (each pair spins), so the leader checks in turn.
bool ranks_outnumber_cores() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (!local) local = std::getenv("MPI_LOCALNRANKS");
  const unsigned cores = std::thread::hardware_concurrency();
  return local && cores && std::strtoul(local, nullptr, 10) > cores;
}
} // namespace

std::vector<int> check_members_over_tree(Transport& t, const GlobalClock& base, const SyncConfig& c,
                                         SyncContext& ctx, bool usable, bool& shared) {
  const int me = t.rank(), n = t.size();
  // Where ranks outnumber cores, every member's parent is the leader (the checks in turn).
  const bool in_turn = ranks_outnumber_cores();
  shared = me == 0;
  if (me > 0) {
    const int parent = in_turn ? 0 : me - highest_bit(me);
    // The parent reads the leader's clock and serves the check.
    if (t.recv_i64(parent) != 0) shared = check_clock_against(t, parent, base, c, ctx, usable);
  }
  for (int step = me == 0 ? 1 : 2 * highest_bit(me); me + step < n && (me == 0 || !in_turn);
       step = in_turn ? step + 1 : 2 * step) {
    t.send_i64(me + step, shared ? 1 : 0);
    if (shared) (void)serve_shared_clock_check(t, me + step, base);
  }
  std::vector<int> deferred;
  if (me > 0) {
    t.send_i64(0, shared ? 1 : 0);
  } else {
    for (int m = 1; m < n; ++m)
      if (t.recv_i64(m) == 0) deferred.push_back(m);
  }
  return deferred;
}

GlobalClock sync_clockprop(Transport& t, const GlobalClock& input, const SyncConfig& c,
                           SyncContext& ctx) {
  // The leader's whole model chain travels as bytes; members rebuild it over their own base clock,
  // which is only right if that base clock IS the leader's. So each member first checks that it
  // reads the leader's base clock; members that fail are synchronized individually. The leader's
  // clock domain travels with the chain: a member that passes shares it exactly.
  const GlobalClock leader_base(input.base());
  std::vector<std::uint8_t> bytes;
  std::int64_t header[2] = {0, ctx.stats.domain}; // chain bytes, leader's domain
  if (t.rank() == 0) {
    bytes = input.flatten();
    header[0] = static_cast<std::int64_t>(bytes.size());
  }
  t.broadcast(header, sizeof header, 0);
  bytes.resize(static_cast<std::size_t>(header[0]));
  t.broadcast(bytes.data(), bytes.size(), 0);
  const PairParams& fallback = c.fallback ? c.fallback->pair : PairParams{};

  GlobalClock result(input.base());
  bool ok = true;
  if (t.rank() != 0) {
    std::string error;
    ok = GlobalClock::unflatten(bytes, input.base(), result, error);
    if (!ok) log::error("clock: ClockPropSync: %s", error.c_str());
  }
  if (!c.check) {
    if (t.rank() == 0) return input;
    // Adopted without verification: not known to equal the leader's clock, so its own domain.
    ctx.stats.domain = ctx.self;
    return ok ? result : input;
  }
  // The check runs over a tree of the group; a member that fails there (or below one that
  // failed) is checked by the leader afterwards, in turn, and synchronized individually if it
  // fails again.
  bool shared = false;
  const std::vector<int> deferred = check_members_over_tree(t, leader_base, c, ctx, ok, shared);
  if (t.rank() == 0) {
    for (int member : deferred)
      if (!serve_shared_clock_check(t, member, leader_base))
        learn_clock_model(t, 0, member, input, fallback, ctx);
    return input;
  }
  if (!shared) shared = check_shared_clock(t, leader_base, c, ctx, ok);
  if (shared) {
    ctx.stats.domain = static_cast<int>(header[1]);
    return result;
  }
  ctx.stats.clockprop_fallback = true;
  const ClockCheck& check = ctx.stats.clock_check;
  const auto offset = static_cast<long long>(check.measurement.offset_ns);
  const auto bound = static_cast<long long>(check.measurement.uncertainty_ns);
  if (ok && check.verdict == ClockVerdict::Differs) {
    log::rank_warning(
        "clock: this rank's clock differs from its node leader's by %lld ns (+-%lld ns): "
        "it does not share that time source, so it is synchronized individually "
        "instead of by ClockPropSync",
        offset, bound);
  } else if (ok) {
    log::rank_warning(
        "clock: %d batches of ping-pongs could not tell whether this rank reads its node "
        "leader's clock (narrowest bounds %lld +-%lld ns, wider than the check's "
        "resolution of %lld ns: a busy machine), so it is synchronized individually "
        "instead of by ClockPropSync",
        check.batches, offset, bound, static_cast<long long>(c.resolution_ns));
  }
  return input.with(learn_clock_model(t, 0, t.rank(), input, fallback, ctx));
}

namespace {
/// The ranks on this rank's host as a subset of `t`: one allgather, no communicator.
std::unique_ptr<Transport> host_subset(Transport& t) {
  const auto hashes = t.allgather(host_name_hash());
  const std::int64_t mine = hashes[static_cast<std::size_t>(t.rank())];
  std::vector<int> members;
  for (int r = 0; r < t.size(); ++r)
    if (hashes[static_cast<std::size_t>(r)] == mine) members.push_back(r);
  return std::make_unique<SubsetTransport>(t, members, std::vector<int>(members.size(), 0));
}

std::unique_ptr<Transport> node_of(Transport& t, const SyncConfig& c) {
  return c.nodes_by_hostname ? host_subset(t) : t.split_node();
}

/// The lowest rank of each node, as a subset of `t` (no new communicator); nullptr elsewhere.
/// Rank 0 leads its node, so it is rank 0 of the leaders too.
std::unique_ptr<Transport> node_leaders(Transport& t, Transport& node) {
  const auto is_leader = t.allgather(node.rank() == 0 ? 1 : 0);
  if (node.rank() != 0) return nullptr;
  std::vector<int> members, nodes;
  for (int r = 0; r < t.size(); ++r)
    if (is_leader[static_cast<std::size_t>(r)]) {
      members.push_back(r);
      nodes.push_back(r); // one leader per node
    }
  return std::make_unique<SubsetTransport>(t, members, nodes);
}
} // namespace

void find_clock_domain(Transport& t, const GlobalClock& input, const SyncConfig& c,
                       SyncContext& ctx) {
  auto host = host_subset(t);
  if (host->size() < 2) return;
  std::int64_t leader_domain = ctx.stats.domain;
  host->broadcast(&leader_domain, sizeof leader_domain, 0);
  const Level outer = ctx.level;
  ctx.level = Level::Intra;
  const GlobalClock base(input.base());
  bool shared = false;
  const std::vector<int> deferred = check_members_over_tree(*host, base, c, ctx, true, shared);
  if (host->rank() == 0) {
    for (int member : deferred)
      (void)serve_shared_clock_check(*host, member, base);
  } else if (shared || check_shared_clock(*host, base, c, ctx)) {
    ctx.stats.domain = static_cast<int>(leader_domain);
  }
  ctx.level = outer;
}

GlobalClock sync_h2hca(Transport& t, const GlobalClock& input, const SyncConfig& c,
                       SyncContext& ctx) {
  // Node leaders are the lowest rank of each node, so rank 0 leads its node and the leader group.
  auto node = node_of(t, c);
  auto leaders = node_leaders(t, *node);
  GlobalClock clock = input;
  const Level outer = ctx.level;
  if (leaders && leaders->size() > 1) {
    ctx.level = Level::Inter;
    clock = run_sync(*c.inter, *leaders, input, ctx);
  }
  if (node->size() > 1) {
    ctx.level = Level::Intra;
    clock = run_sync(*c.intra, *node, clock, ctx);
  }
  ctx.level = outer;
  return clock;
}

GlobalClock sync_h3hca(Transport& t, const GlobalClock& input, const SyncConfig& c,
                       SyncContext& ctx) {
  auto node = node_of(t, c);
  const int socket_id = ctx.socket_id ? ctx.socket_id() : current_socket_id();
  // Socket groups as subsets of the node: no further communicators to create.
  std::vector<int> node_ranks(static_cast<std::size_t>(node->size()));
  for (int r = 0; r < node->size(); ++r)
    node_ranks[static_cast<std::size_t>(r)] = r;
  SubsetTransport whole_node(*node, node_ranks, std::vector<int>(node_ranks.size(), 0));
  auto socket = whole_node.split(socket_id, node->rank());
  auto socket_leaders = whole_node.split(socket->rank() == 0 ? 0 : -1, node->rank());
  auto leaders = node_leaders(t, *node);
  GlobalClock clock = input;
  const Level outer = ctx.level;
  if (leaders && leaders->size() > 1) {
    ctx.level = Level::Inter;
    clock = run_sync(*c.inter, *leaders, input, ctx);
  }
  ctx.level = Level::Intra;
  if (socket_leaders && socket_leaders->size() > 1)
    clock = run_sync(*c.socket, *socket_leaders, clock, ctx);
  if (socket->size() > 1) clock = run_sync(*c.intra, *socket, clock, ctx);
  ctx.level = outer;
  return clock;
}

GlobalClock run_sync(const SyncConfig& c, Transport& t, const GlobalClock& input,
                     SyncContext& ctx) {
  if (t.size() < 2) return input;
  switch (c.algorithm) {
  case Algorithm::None:
    return input;
  case Algorithm::Jk:
    return sync_jk(t, input, c.pair, ctx);
  case Algorithm::Hca:
    return sync_hca(t, input, c.pair, ctx);
  case Algorithm::Hca2:
    return sync_hca2(t, input, c.pair, ctx);
  case Algorithm::Hca3:
    return sync_hca3(t, input, c.pair, ctx);
  case Algorithm::ClockProp:
    return sync_clockprop(t, input, c, ctx);
  case Algorithm::H2hca:
    return sync_h2hca(t, input, c, ctx);
  case Algorithm::H3hca:
    return sync_h3hca(t, input, c, ctx);
  }
  return input;
}

int current_socket_id() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return 0;
  int id = 0;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (hwloc_topology_load(topo) == 0 && set &&
      hwloc_get_last_cpu_location(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    hwloc_obj_t pkg =
        hwloc_get_next_obj_covering_cpuset_by_type(topo, set, HWLOC_OBJ_PACKAGE, nullptr);
    if (pkg) id = static_cast<int>(pkg->logical_index);
  }
  if (set) hwloc_bitmap_free(set);
  hwloc_topology_destroy(topo);
  return id;
}

} // namespace htrace::clock
