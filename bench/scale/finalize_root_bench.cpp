// Rank 0's share of MPI_Finalize that grows with P, timed in one quiet process: the definition
// tree's messages (serialized subtree sets), the merges rank 0 does and the global definitions it
// computes, write_global_definitions into a fresh OTF2 archive, and the translations it sends back
// down. Oversubscribed runs (bench/scale/tracer_counts.py) mix this with time slices of the other
// ranks; here each phase runs alone, with wall and CPU time (the VM may host other jobs).
//
//   scale_finalize_root_bench [--reps N] [--regions N] [--ranks-per-node N] [--csv FILE]
//                             [--tmp DIR] [--check] [P ...]  (default P: 1000 10000 100000)
//
// Follows unify_over_tree() in libtrace/record/finalize.cpp: rank 0's children are the subtrees
// [step, min(2 step, P)) for step = 1, 2, 4, ...; rank 0 deserializes each child's set and merges
// it into its own in that order, then global_ids + global_definitions, and sends each child the
// composed translation (the last child first). The children's sets are built beforehand with the
// same merges (untimed: in a run the other ranks do that in parallel).
#include "record/archive.h"
#include "record/global_defs.h"
#include "record/unify.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mpi.h>
#include <string>
#include <sys/resource.h>
#include <time.h>
#include <vector>

namespace {

using namespace htrace::record;

struct Options {
  std::vector<int> ps;
  int reps = 5;
  // libhtrace registers a region for every MPI function it wraps at MPI_Init (lifecycle.cpp,
  // register_function_regions), used or not: ~611 with Open MPI 4.1's mpi.h.
  int regions = 611;
  int ranks_per_node = 64;
  int check_up_to = 0; ///< --check: P up to which the result is compared with unify()'s
  std::string csv;
  std::string tmp;
};

// The MPI functions a typical program calls, first; the rest of the wrapped table is padded with
// generated names (only their count matters to unification).
const char* const kTypical[] = {"MPI_Init",
                                "MPI_Finalize",
                                "MPI_Comm_rank",
                                "MPI_Comm_size",
                                "MPI_Comm_split",
                                "MPI_Comm_dup",
                                "MPI_Comm_free",
                                "MPI_Send",
                                "MPI_Recv",
                                "MPI_Isend",
                                "MPI_Irecv",
                                "MPI_Wait",
                                "MPI_Waitall",
                                "MPI_Test",
                                "MPI_Sendrecv",
                                "MPI_Barrier",
                                "MPI_Bcast",
                                "MPI_Reduce",
                                "MPI_Allreduce",
                                "MPI_Gather",
                                "MPI_Gatherv",
                                "MPI_Allgather",
                                "MPI_Scatter",
                                "MPI_Alltoall",
                                "MPI_Alltoallv",
                                "MPI_Iallreduce",
                                "MPI_Type_commit",
                                "MPI_Type_free",
                                "MPI_Type_contiguous",
                                "MPI_Wtime"};

RegionRole typical_role(const std::string& name) {
  if (name == "MPI_Barrier") return RegionRole::Barrier;
  if (name == "MPI_Send" || name == "MPI_Recv" || name == "MPI_Isend" || name == "MPI_Irecv" ||
      name == "MPI_Sendrecv")
    return RegionRole::PointToPoint;
  if (name.find("MPI_Bcast") == 0 || name.find("reduce") != std::string::npos ||
      name.find("ather") != std::string::npos || name.find("MPI_Scatter") == 0 ||
      name.find("MPI_Alltoall") == 0)
    return RegionRole::Collective;
  return RegionRole::Function;
}

/// One rank's definitions as collect_definitions() makes them in a typical run: one MPI location,
/// the registered regions, MPI_COMM_WORLD and MPI_COMM_SELF (register_predefined_comms), a split
/// per node and one dup of the world, and the clock's process properties (clock_lifecycle.cpp).
class RankFactory {
public:
  RankFactory(int p, const Options& o) : per_node_(o.ranks_per_node) {
    world_.resize(static_cast<std::size_t>(p));
    for (int r = 0; r < p; ++r)
      world_[static_cast<std::size_t>(r)] = r;
    for (int i = 0; i < o.regions; ++i) {
      const std::size_t n = sizeof kTypical / sizeof kTypical[0];
      const std::string name = static_cast<std::size_t>(i) < n
                                   ? std::string(kTypical[i])
                                   : "MPI_Wrapped_function_" + std::to_string(i);
      regions_.push_back({name, Paradigm::Mpi, typical_role(name)});
    }
    for (const char* when : {"INIT_", "FINAL_"})
      for (const char* what : {"TIME", "OFFSET", "UNCERTAINTY"})
        properties_.push_back(std::string("HTRACE::CLOCK::") + when + what);
    properties_.push_back("HTRACE::CLOCK::DOMAIN");
  }

  RankDefs operator()(int rank) const {
    const int node = rank / per_node_;
    RankDefs d;
    d.rank = rank;
    char host[32];
    std::snprintf(host, sizeof host, "node%05d", node);
    d.host = host;
    const std::int64_t t0 = 1'000'000'000;
    d.locations.push_back({static_cast<LocationId>(rank), 12345, t0 + rank, t0 + 60'000'000'000});
    d.regions = regions_;
    CommDef world;
    world.name = "MPI_COMM_WORLD";
    world.world_ranks = world_;
    CommDef self;
    self.name = "MPI_COMM_SELF";
    self.world_ranks = {rank};
    CommDef split;
    split.name = "MPI_Comm_split";
    split.parent = 0;
    const int first = node * per_node_;
    const int last = std::min(first + per_node_, static_cast<int>(world_.size()));
    for (int r = first; r < last; ++r)
      split.world_ranks.push_back(r);
    CommDef dup;
    dup.name = "MPI_Comm_dup";
    dup.parent = 0;
    dup.world_ranks = world_;
    d.comms = {std::move(world), std::move(self), std::move(split), std::move(dup)};
    std::int64_t value = 17 + rank % 5;
    for (const auto& name : properties_)
      d.process_properties.emplace_back(name, value++);
    d.process_properties.back().second = node; // the clock domain: one per node
    return d;
  }

private:
  int per_node_;
  std::vector<int> world_;
  std::vector<RegionDef> regions_;
  std::vector<std::string> properties_;
};

/// The set of ranks [begin, end) as that subtree's root holds it before sending it up: leaves
/// merged in the binomial tree's pairs (a binary counter over rank order; the partial top collapses
/// from the right, as ranks whose partner is past the end skip their rounds).
DefSet subtree_set(const RankFactory& make, int begin, int end) {
  std::vector<std::pair<int, DefSet>> stack; // (ranks held, set)
  for (int r = begin; r < end; ++r) {
    LeafIds ids;
    stack.emplace_back(1, leaf_set(make(r), ids));
    while (stack.size() >= 2 && stack[stack.size() - 2].first == stack.back().first) {
      auto later = std::move(stack.back());
      stack.pop_back();
      merge(stack.back().second, std::move(later.second));
      stack.back().first *= 2;
    }
  }
  while (stack.size() >= 2) {
    auto later = std::move(stack.back());
    stack.pop_back();
    merge(stack.back().second, std::move(later.second));
  }
  return stack.empty() ? DefSet{} : std::move(stack.back().second);
}

// ---- timing ----
struct Sample {
  double wall_ms = 0, cpu_ms = 0;
};

double cpu_now_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/// Times `f` on the wall clock and on the process's CPU clock.
template <class F> Sample timed(F&& f) {
  const auto w0 = std::chrono::steady_clock::now();
  const double c0 = cpu_now_ms();
  f();
  Sample s;
  s.cpu_ms = cpu_now_ms() - c0;
  s.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count();
  return s;
}

struct Stat {
  double med = 0, min = 0, max = 0;
};

Stat stat(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stat s;
  if (v.empty()) return s;
  s.min = v.front();
  s.max = v.back();
  const std::size_t n = v.size();
  s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

long peak_rss_kb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

// Phases in the order of the table; a..d as in bench/scale/README.md.
const char* const kPhases[] = {"a_serialize",    "a_deserialize", "b_merge", "b_global_definitions",
                               "c_write_global", "c_close",       "d_down",  "total"};
constexpr std::size_t kPhaseCount = sizeof kPhases / sizeof kPhases[0];

struct Result {
  int p = 0;
  std::vector<Sample> samples[kPhaseCount];
  std::size_t bytes_up = 0, bytes_down = 0;
  double setup_s = 0;
  long rss_kb = 0;
};

/// A temporary directory, removed with everything in it.
class TempDir {
public:
  explicit TempDir(const std::string& parent) {
    std::string pattern = parent + "/htrace-rootbench-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      std::perror("mkdtemp");
      std::exit(1);
    }
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

Result run(int p, const Options& o) {
  Result res;
  res.p = p;
  const RankFactory make(p, o);
  const auto t_setup = std::chrono::steady_clock::now();
  // Rank 0's children in the order it receives them (finalize.cpp: step = 1, 2, 4, ...).
  std::vector<DefSet> children;
  for (int step = 1; step < p; step *= 2)
    children.push_back(subtree_set(make, step, std::min(2 * step, p)));
  const RankDefs mine = make(0);
  res.setup_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup).count();
  // At small P, the tree's result must be unify()'s (the whole tree in one call) on the same defs.
  std::vector<RankDefs> all;
  if (p <= o.check_up_to)
    for (int r = 0; r < p; ++r)
      all.push_back(make(r));
  const Unified reference = all.empty() ? Unified{} : unify(all);
  all.clear();
  std::fprintf(stderr, "# P=%d: set up in %.1f s, timing\n", p, res.setup_s); // perf -p from here

  for (int rep = 0; rep < o.reps; ++rep) {
    Sample s[kPhaseCount];
    // (a) the messages up: each child serializes its subtree's set, rank 0 deserializes it.
    std::vector<std::string> wire(children.size());
    s[0] = timed([&] {
      for (std::size_t i = 0; i < children.size(); ++i)
        wire[i] = serialize(children[i]);
    });
    std::vector<DefSet> received(children.size());
    bool ok = true;
    s[1] = timed([&] {
      for (std::size_t i = 0; i < wire.size(); ++i)
        ok = deserialize(wire[i], received[i]) && ok;
    });
    if (!ok) {
      std::fprintf(stderr, "P=%d: a set did not deserialize\n", p);
      std::exit(1);
    }
    res.bytes_up = 0;
    for (const auto& w : wire)
      res.bytes_up += w.size();
    wire.clear();

    // (b) rank 0's merges in round order, then its global ids and definitions.
    LeafIds ids;
    DefSet set;
    std::vector<SetMap> child_maps;
    s[2] = timed([&] {
      set = leaf_set(mine, ids);
      for (auto& child : received)
        child_maps.push_back(merge(set, std::move(child)));
    });
    SetMap to_global;
    Unified unified;
    s[3] = timed([&] {
      to_global = global_ids(set);
      unified = global_definitions(set);
    });

    if (rep == 0 && p <= o.check_up_to &&
        (unified.regions.size() != reference.regions.size() ||
         unified.comms.size() != reference.comms.size() ||
         unified.groups.size() != reference.groups.size() || set.ranks.size() != std::size_t(p))) {
      std::fprintf(stderr, "P=%d: the tree's definitions differ from unify()'s\n", p);
      std::exit(1);
    }

    // (c) the global definitions into a fresh archive, opened as the recorder opens it.
    {
      TempDir dir(o.tmp);
      State& st = state();
      const std::string err = open_archive(st, dir.path() + "/archive");
      if (!err.empty()) {
        std::fprintf(stderr, "open_archive: %s\n", err.c_str());
        std::exit(1);
      }
      ClockInfo clock;
      clock.global_offset = 1'000'000'000;
      clock.trace_length = 60'000'000'000;
      clock.realtime_at_offset = 1'700'000'000'000'000'000;
      std::string werr;
      s[4] = timed([&] { werr = write_global_definitions(st.archive, set.ranks, unified, clock); });
      s[5] = timed([&] { werr += close_archive(st); });
      if (!werr.empty()) {
        std::fprintf(stderr, "writing the global definitions: %s\n", werr.c_str());
        std::exit(1);
      }
    }

    // (d) the translations down, the child merged last (largest subtree) first, and rank 0's own.
    IdMaps maps;
    std::size_t down = 0;
    s[6] = timed([&] {
      for (auto it = child_maps.rbegin(); it != child_maps.rend(); ++it)
        down += serialize(compose(to_global, *it)).size();
      maps = local_maps(ids, to_global);
    });
    res.bytes_down = down;

    for (std::size_t i = 0; i + 1 < kPhaseCount; ++i) {
      s[kPhaseCount - 1].wall_ms += s[i].wall_ms;
      s[kPhaseCount - 1].cpu_ms += s[i].cpu_ms;
    }
    for (std::size_t i = 0; i < kPhaseCount; ++i)
      res.samples[i].push_back(s[i]);
  }
  res.rss_kb = peak_rss_kb();
  return res;
}

Stat wall(const std::vector<Sample>& v) {
  std::vector<double> x;
  for (const auto& s : v)
    x.push_back(s.wall_ms);
  return stat(x);
}

Stat cpu(const std::vector<Sample>& v) {
  std::vector<double> x;
  for (const auto& s : v)
    x.push_back(s.cpu_ms);
  return stat(x);
}

std::string cell(const Stat& s) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.2f (%.2f-%.2f)", s.med, s.min, s.max);
  return buf;
}

void print_table(const std::vector<Result>& results, bool use_cpu) {
  std::printf("\n%s time, median of %zu (min-max) ms\n\n", use_cpu ? "CPU" : "Wall",
              results.empty() ? 0 : results[0].samples[0].size());
  std::printf("| P | (a) ser+deser | (b) merge+global defs | (c) write global | (d) maps down | "
              "total | us/rank |\n|---:|---:|---:|---:|---:|---:|---:|\n");
  auto sum = [&](const Result& r, std::initializer_list<std::size_t> phases) {
    std::vector<double> x(r.samples[0].size(), 0.0);
    for (std::size_t ph : phases)
      for (std::size_t i = 0; i < x.size(); ++i)
        x[i] += use_cpu ? r.samples[ph][i].cpu_ms : r.samples[ph][i].wall_ms;
    return stat(x);
  };
  for (const auto& r : results) {
    const Stat a = sum(r, {0, 1}), b = sum(r, {2, 3}), c = sum(r, {4, 5}), d = sum(r, {6}),
               t = sum(r, {7});
    std::printf("| %d | %s | %s | %s | %s | %s | %.2f |\n", r.p, cell(a).c_str(), cell(b).c_str(),
                cell(c).c_str(), cell(d).c_str(), cell(t).c_str(), t.med * 1e3 / r.p);
  }
}

void write_csv(const std::string& path, const std::vector<Result>& results) {
  std::ofstream out(path);
  out << "p,phase,reps,wall_med_ms,wall_min_ms,wall_max_ms,cpu_med_ms,cpu_min_ms,cpu_max_ms,"
         "us_per_rank_wall,us_per_rank_cpu,bytes_up,bytes_down,peak_rss_kb\n";
  for (const auto& r : results)
    for (std::size_t i = 0; i < kPhaseCount; ++i) {
      const Stat w = wall(r.samples[i]), c = cpu(r.samples[i]);
      char line[512];
      std::snprintf(line, sizeof line,
                    "%d,%s,%zu,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%zu,%zu,%ld\n", r.p,
                    kPhases[i], r.samples[i].size(), w.med, w.min, w.max, c.med, c.min, c.max,
                    w.med * 1e3 / r.p, c.med * 1e3 / r.p, r.bytes_up, r.bytes_down, r.rss_kb);
      out << line;
    }
  if (!out) std::fprintf(stderr, "writing %s failed\n", path.c_str());
}

int usage(const char* argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--reps N] [--regions N] [--ranks-per-node N] [--csv FILE] [--tmp DIR] [--check] "
      "[P ...]\n",
      argv0);
  return 2;
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  const char* tmp = std::getenv("TMPDIR");
  o.tmp = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) std::exit(usage(argv[0]));
      return argv[++i];
    };
    if (a == "--reps")
      o.reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--regions")
      o.regions = std::max(1, std::atoi(value().c_str()));
    else if (a == "--ranks-per-node")
      o.ranks_per_node = std::max(1, std::atoi(value().c_str()));
    else if (a == "--csv")
      o.csv = value();
    else if (a == "--tmp")
      o.tmp = value();
    else if (a == "--check")
      o.check_up_to = 2000; // costs memory: not with the RSS figures
    else if (!a.empty() && a[0] != '-' && std::atoi(a.c_str()) > 0)
      o.ps.push_back(std::atoi(a.c_str()));
    else
      return usage(argv[0]);
  }
  if (o.ps.empty()) o.ps = {1000, 10000, 100000};

  // OTF2's collective callbacks need MPI: one process, its own world.
  MPI_Init(&argc, &argv);
  State& st = state();
  st.comm = MPI_COMM_WORLD;
  st.rank = 0;
  st.size = 1;

  std::printf("# finalize_root_bench: %d reps, %d regions per rank, %d ranks per node\n", o.reps,
              o.regions, o.ranks_per_node);
  std::vector<Result> results;
  for (int p : o.ps) {
    results.push_back(run(p, o));
    const Result& r = results.back();
    std::printf("# P=%d: setup %.1f s, up %zu bytes, down %zu bytes, peak RSS so far %.1f MB\n", p,
                r.setup_s, r.bytes_up, r.bytes_down, r.rss_kb / 1024.0);
    std::fflush(stdout);
  }
  print_table(results, false);
  print_table(results, true);
  std::printf("\nPhases (CPU median ms): ");
  for (const auto& r : results) {
    std::printf("\n  P=%d:", r.p);
    for (std::size_t i = 0; i < kPhaseCount; ++i)
      std::printf(" %s %.2f", kPhases[i], cpu(r.samples[i]).med);
  }
  std::printf("\n");
  if (!o.csv.empty()) write_csv(o.csv, results);
  MPI_Finalize();
  return 0;
}
