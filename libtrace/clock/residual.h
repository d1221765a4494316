// Residual clock offsets for the archive (INIT_* after the sync, FINAL_* in MPI_Finalize): how far
// each process's global clock is from world rank 0's, with a rigorous uncertainty.
//
// Only one process per clock domain is measured (processes of a domain read one clock, so they
// get the leader's values unchanged: the correction tool relies on identical values). The domain
// leaders form a binomial tree (leader i's parent is i minus its highest set bit); in round k every
// leader below 2^k serves leader i + 2^k at once, so ceil(log2 D) rounds cover D domains. Each
// child measures its global clock against its parent's with SKaMPI, and the parent's own offset to
// rank 0 (known since an earlier round) is added: offsets and uncertainties compose along the path.
#pragma once

#include "clock/algorithms.h"
#include "clock/global_clock.h"
#include "clock/offset.h"
#include "clock/transport.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace htrace::clock {

/// Every rank's clock domain and host, gathered once (two allgathers) and reused in Finalize.
struct DomainLayout {
  std::vector<int> domain;        ///< per rank: the rank leading its domain (domain[0] == 0)
  std::vector<std::int64_t> host; ///< per rank: host name hash (intra- or inter-node exchange)
  std::vector<int> leaders;       ///< ranks leading a domain, ascending (leaders[0] == 0)

  /// Collective over `world`. A claimed domain whose leader does not lead itself is not trusted:
  /// such a rank becomes its own domain.
  static DomainLayout gather(Transport& world, int my_domain, std::int64_t my_host);
  /// The layout from per-rank values (already gathered); the same sanitizing.
  static DomainLayout from(std::vector<int> domain, std::vector<std::int64_t> host);
  /// Rounds of the leaders' tree: ceil(log2(number of domains)).
  int rounds() const;
};

/// Hands `bytes` at `data` from each domain's leader to every member of its domain, over a binomial
/// tree of the domain's ranks (ascending; position i forwards to i + 2^k for each 2^k above its
/// highest bit): ceil(log2 n) rounds instead of n - 1 sends by the leader. Collective over `world`.
void domain_broadcast(Transport& world, const DomainLayout& layout, void* data, std::size_t bytes);

struct Residual {
  /// time_ns: the domain leader's global clock at the end of its measurement (for rank 0's
  /// domain: when rank 0 started serving). offset_ns / uncertainty_ns: global clock minus rank
  /// 0's, composed along the tree path; min_rtt_ns: fastest round trip of this domain's leader
  /// against its parent (SyncStats::kUnknown when it measured nothing).
  OffsetMeasurement m;
  bool intra = false; ///< the leader's parent runs on the same host
};

/// One tree edge: the tightest of `bursts` SKaMPI measurements of `pingpongs` exchanges each,
/// `pause` apart (a burst shorter than a scheduler time slice can be delayed as a whole).
struct ResidualParams {
  int bursts = 4;
  int pingpongs = 32;
  std::chrono::microseconds pause{300};
};

/// Measures the residual of every domain on `clock` and hands each leader's result to its
/// domain's members. Collective over `world`. Cost: rounds() tree rounds, each
/// bursts * (pingpongs round trips + 2 one-way messages) + (bursts - 1) * pause, then one message
/// per member; rank 0 takes part in every round, every other leader in at most rounds() + 1.
Residual measure_residuals(Transport& world, const GlobalClock& clock, const DomainLayout& layout,
                           const ResidualParams& params = {});

} // namespace htrace::clock
