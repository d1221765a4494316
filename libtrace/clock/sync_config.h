// HTRACE_SYNC: one string selects the synchronization algorithm and its parameters, e.g.
//   h2hca                                   (the default)
//   h2hca(inter=hca3(fitpoints=20,pingpongs=10),intra=clockprop)
//   h2hca(inter=hca3:fitpoints=20:pingpongs=10,intra=clockprop)   (':' form, same meaning)
//   hca3(fitpoints=100,offset=meanrtt)    jk    hca    hca2    h3hca    none
// Grammar (README.md has the parameter tables):
//   spec  := name [ '(' [ param { ',' param } ] ')' ] { ':' param }
//   param := key '=' ( spec | value )          spec for inter/intra/socket/fallback
// Anything that does not parse is an error naming the position and the problem; there is no
// silent fallback to a default.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace htrace::clock {

enum class OffsetMethod { Skampi, MeanRtt };
enum class SlopePolicy { Auto, Fit, Off };
enum class Algorithm { None, Jk, Hca, Hca2, Hca3, ClockProp, H2hca, H3hca };

/// How one pair of ranks learns a clock model (Algorithm 2 of the paper).
struct PairParams {
  int fitpoints = 20;
  int pingpongs = 10; ///< exchanges per offset measurement
  OffsetMethod offset = OffsetMethod::Skampi;
  bool recompute_intercept = true;
  SlopePolicy slope = SlopePolicy::Auto; ///< auto: keep the fitted slope only when significant
  std::int64_t window_ns = 0;            ///< fit points spread over this time (0: back to back)
};

struct SyncConfig {
  Algorithm algorithm = Algorithm::H2hca;
  PairParams pair; ///< jk, hca, hca2, hca3
  // clockprop
  bool check = true; ///< verify that members read the leader's base clock
  int check_pingpongs = 5;
  std::int64_t tolerance_ns = 100; ///< slack on the check's bound (clock read granularity)
  /// The check decides "one clock" only from bounds at most this wide (half width): another time
  /// source is ms to s away, an exchange delayed by a preemption widens the bounds as much.
  std::int64_t resolution_ns = 50'000;
  std::shared_ptr<SyncConfig> fallback; ///< pairwise sync of members that fail the check
  // h2hca / h3hca
  /// nodes=hostname (default): ranks grouped by host name (one allgather); nodes=shared: by
  /// MPI_Comm_split_type(SHARED), which costs a communicator creation. The ClockPropSync check
  /// guards both against ranks that do not really share a clock.
  bool nodes_by_hostname = true;
  std::shared_ptr<SyncConfig> inter;  ///< between node leaders
  std::shared_ptr<SyncConfig> socket; ///< h3hca: between socket leaders of one node
  std::shared_ptr<SyncConfig> intra;  ///< inside a node (h2hca) or a socket (h3hca)
};

struct SyncConfigResult {
  SyncConfig config;
  std::string error; ///< empty on success
  bool ok() const { return error.empty(); }
};

SyncConfigResult parse_sync_config(const std::string& text);
/// Canonical form with every parameter spelled out (stored in the archive).
std::string to_string(const SyncConfig& config);
const char* algorithm_name(Algorithm algorithm);
/// True for the algorithms that pair ranks with learn_clock_model (jk, hca, hca2, hca3).
bool is_pairwise(Algorithm algorithm);

} // namespace htrace::clock
