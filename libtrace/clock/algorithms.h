// The clock synchronization algorithms of Hunold & Carpen-Amarie: each takes a group of ranks
// (rank 0 is the reference) and every rank's input clock, and returns that rank's global clock.
// They nest: H2HCA runs one algorithm between node leaders and another inside each node.
#pragma once

#include "clock/global_clock.h"
#include "clock/offset.h"
#include "clock/sync_config.h"
#include "clock/transport.h"

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

namespace htrace::clock {

/// How a member's shared-clock check against its node leader ended.
enum class ClockVerdict {
  NotRun,   ///< this rank was not checked (a leader, a pairwise algorithm, check=0)
  Shared,   ///< 0 inside bounds no wider than the check's resolution: one clock
  Differs,  ///< 0 outside the bounds (plus tolerance): another clock
  Undecided ///< every batch's bounds were wider than the resolution (a busy machine)
};
const char* verdict_name(ClockVerdict verdict);

struct ClockCheck {
  ClockVerdict verdict = ClockVerdict::NotRun;
  OffsetMeasurement measurement; ///< the deciding batch, or the one with the narrowest bounds
  int batches = 0;               ///< batches of ping-pongs measured, in all checks of this rank
};

/// Facts gathered while synchronizing, for the archive and for diagnostics (this rank's view).
struct SyncStats {
  static constexpr std::int64_t kUnknown = std::numeric_limits<std::int64_t>::max();
  std::int64_t min_rtt_intra_ns = kUnknown; ///< fastest round trip seen inside a node
  std::int64_t min_rtt_inter_ns = kUnknown; ///< ... between nodes
  std::int64_t min_rtt_other_ns = kUnknown; ///< ... in flat algorithms (placement unknown)
  bool clockprop_fallback = false;          ///< this rank failed the shared-clock check
  /// ClockPropSync's shared-clock check of this rank (a member), as it was decided.
  ClockCheck clock_check;
  /// Clock domain: SyncContext::self of the rank whose global clock this rank's equals exactly
  /// (verified by ClockPropSync's check); this rank's own id once it has a model of its own.
  int domain = -1;
};

enum class Level { Flat, Inter, Intra };

struct SyncContext {
  SyncStats stats;
  Level level = Level::Flat;
  /// This rank's id for SyncStats::domain (the tracer: the world rank); synchronize_on sets it
  /// to the rank in its transport when negative.
  int self = -1;
  /// Socket (package) of the calling process, for H3HCA; default asks hwloc.
  std::function<int()> socket_id;
  void note_rtt(std::int64_t rtt);
};

/// Algorithm 2: `client` learns a linear model of its clock against `reference`'s clock.
/// Returns the model on the client; on the reference the result is meaningless.
LinearModel learn_clock_model(Transport& t, int reference, int client, const GlobalClock& clock,
                              const PairParams& params, SyncContext& ctx);

GlobalClock sync_jk(Transport& t, const GlobalClock& input, const PairParams& p, SyncContext& ctx);
GlobalClock sync_hca(Transport& t, const GlobalClock& input, const PairParams& p, SyncContext& ctx);
GlobalClock sync_hca2(Transport& t, const GlobalClock& input, const PairParams& p,
                      SyncContext& ctx);
GlobalClock sync_hca3(Transport& t, const GlobalClock& input, const PairParams& p,
                      SyncContext& ctx);
GlobalClock sync_clockprop(Transport& t, const GlobalClock& input, const SyncConfig& c,
                           SyncContext& ctx);
GlobalClock sync_h2hca(Transport& t, const GlobalClock& input, const SyncConfig& c,
                       SyncContext& ctx);
GlobalClock sync_h3hca(Transport& t, const GlobalClock& input, const SyncConfig& c,
                       SyncContext& ctx);

/// ClockPropSync's check, member side: measures this rank's base clock `base` against the
/// leader's (rank 0 of `group`) with SKaMPI, in batches of `c.check_pingpongs` exchanges. The
/// bounds are rigorous, so a batch with 0 outside them (plus `c.tolerance_ns`) proves another
/// clock; a batch with 0 inside proves one clock only to within its width, so the check takes
/// another batch while the bounds are wider than `c.resolution_ns` (a preempted exchange, on a
/// busy machine, widens them to milliseconds), up to kClockCheckBatches, and counts a check
/// still that wide as failed: the member is then synchronized individually, which is right either
/// way. Tells the leader the verdict (false when not `usable`) and returns it; the record goes
/// to ctx.stats.clock_check. The leader calls serve_shared_clock_check for each member in turn.
bool check_shared_clock(Transport& group, const GlobalClock& base, const SyncConfig& c,
                        SyncContext& ctx, bool usable = true);
/// The leader's side of `member`'s check; returns the member's verdict.
bool serve_shared_clock_check(Transport& group, int member, const GlobalClock& base);
/// Batches of ping-pongs a shared-clock check may take before it counts as failed.
constexpr int kClockCheckBatches = 8;
/// The same check for every member of `group` over a binomial tree (ceil(log2 n) rounds instead of
/// n - 1 checks by the leader in turn): in round k every rank i < 2^k that reads the leader's
/// clock (the leader, or a member that passed) checks rank i + 2^k, and passing against a rank
/// that reads the leader's clock means reading it too. Collective over `group`. Sets `shared` to
/// this rank's verdict (the leader's: true); on the leader, returns the members that failed or
/// sat below one that failed: those must run check_shared_clock against the leader afterwards,
/// in this order, exactly as without the tree (the leader serving them in turn). Where the node's
/// ranks outnumber its cores the leader checks every member in turn instead: concurrent spinning
/// pairs would only compete for the cores.
std::vector<int> check_members_over_tree(Transport& group, const GlobalClock& base,
                                         const SyncConfig& c, SyncContext& ctx, bool usable,
                                         bool& shared);

/// For HTRACE_SYNC=none (no model anywhere): the ranks on one host (by host name) run
/// ClockPropSync's check against the host's lowest rank with `c`'s check parameters; those that
/// pass join its domain (ctx.stats.domain), the others keep their own. Collective over `t`.
void find_clock_domain(Transport& t, const GlobalClock& input, const SyncConfig& c,
                       SyncContext& ctx);

/// Runs the algorithm `config` selects. Collective over `t`.
GlobalClock run_sync(const SyncConfig& config, Transport& t, const GlobalClock& input,
                     SyncContext& ctx);

/// hwloc: logical index of the package this process last ran on (0 when unknown).
int current_socket_id();

} // namespace htrace::clock
