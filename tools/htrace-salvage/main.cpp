// htrace-salvage: turns what a run that ended badly left on disk (MPI_Abort, a signal, a batch
// time limit, SIGKILL, a full disk) into an archive every OTF2 reader opens. Thin driver over
// salvage.cpp.
#include "cli.h"
#include "salvage.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

const char* const kDescription =
    "Rebuilds a readable OTF2 archive from a libhtrace archive whose run did not reach "
    "MPI_Finalize (MPI_Abort, a signal, a time limit, SIGKILL, a full disk). Every event the "
    "processes flushed is kept; ranks that were cut off end with a region naming the cause.";

const char* const kExitCodes =
    "Exit codes: 0 success; 2 usage error;\n"
    "3 bad input (IN has no salvage files, or they are damaged; nothing written);\n"
    "4 output error (OUT exists, cannot be created or written, disk full; IN untouched);\n"
    "5 internal error.";

// Ranks listed one by one up to this many; beyond, grouped by how they ended, a screenful at any
// scale.
constexpr std::size_t kRanksListed = 16;
// In a grouped summary: the runs of consecutive ranks named per group, the damaged files named.
constexpr std::size_t kRunsNamed = 8, kDamagedNamed = 8;

struct RankCounts {
  std::uint64_t copied = 0, closed = 0, cut_locations = 0;
  std::vector<const htrace::salvage::Result::Location*> damaged;
  // Per cut-off location: the marker's Enter and Leave, and a Leave per open region.
  std::uint64_t added() const { return 2 * cut_locations + closed; }
};

RankCounts count(const htrace::salvage::Result::Rank& rank) {
  RankCounts c;
  for (const auto& loc : rank.locations) {
    c.copied += loc.events;
    c.closed += loc.closed;
    if (loc.events && !rank.finished) ++c.cut_locations;
    if (loc.file_damaged) c.damaged.push_back(&loc);
  }
  return c;
}

std::string damage_text(const htrace::salvage::Result::Location& loc) {
  return "event file of location " + std::to_string(loc.id) +
         " is damaged, kept up to the damage (" + loc.damage + ")";
}

std::string cut_off_text(std::uint64_t closed) {
  return ", cut off (marker and " + std::to_string(closed) + " open region(s) closed)";
}

// "0-119, 121-240" for ascending ranks: the first kRunsNamed runs, then how many ranks more.
std::string rank_runs(const std::vector<int>& ranks) {
  std::string out;
  std::size_t runs = 0, i = 0;
  for (; i < ranks.size() && runs < kRunsNamed; ++runs) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    out += (runs ? ", " : "") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  if (i < ranks.size()) out += " and " + std::to_string(ranks.size() - i) + " more";
  return out;
}

void print_each_rank(const htrace::salvage::Result& r) {
  for (const auto& rank : r.ranks) {
    const RankCounts c = count(rank);
    std::string line = "rank " + std::to_string(rank.rank) + ": " + rank.end + ": " +
                       std::to_string(c.copied) + " events";
    if (!rank.finished && c.cut_locations) line += cut_off_text(c.closed);
    for (const auto* loc : c.damaged)
      line += "; " + damage_text(*loc);
    std::printf("%s\n", line.c_str());
  }
}

void print_ranks_grouped(const htrace::salvage::Result& r) {
  struct Group {
    std::vector<int> ranks;
    std::uint64_t copied = 0, closed = 0;
  };
  // By how a rank ended, and whether it was cut off with events.
  std::map<std::pair<std::string, bool>, Group> groups;
  std::vector<std::pair<int, const htrace::salvage::Result::Location*>> damaged;
  for (const auto& rank : r.ranks) {
    const RankCounts c = count(rank);
    Group& g = groups[{rank.end, !rank.finished && c.cut_locations}];
    g.ranks.push_back(rank.rank);
    g.copied += c.copied;
    g.closed += c.closed;
    for (const auto* loc : c.damaged)
      damaged.emplace_back(rank.rank, loc);
  }
  std::printf("%zu ranks, by how they ended:\n", r.ranks.size());
  for (auto& [key, g] : groups) {
    std::sort(g.ranks.begin(), g.ranks.end());
    std::printf("  %zu rank(s) (%s): %s: %llu events%s\n", g.ranks.size(),
                rank_runs(g.ranks).c_str(), key.first.c_str(),
                static_cast<unsigned long long>(g.copied),
                key.second ? cut_off_text(g.closed).c_str() : "");
  }
  for (std::size_t i = 0; i < damaged.size() && i < kDamagedNamed; ++i)
    std::printf("  rank %d: %s\n", damaged[i].first, damage_text(*damaged[i].second).c_str());
  if (damaged.size() > kDamagedNamed)
    std::printf("  and %zu more damaged event file(s), each kept up to its damage\n",
                damaged.size() - kDamagedNamed);
}

void print_summary(const htrace::salvage::Result& r, const std::string& out) {
  if (r.ranks.size() <= kRanksListed)
    print_each_rank(r);
  else
    print_ranks_grouped(r);
  std::uint64_t events = 0;
  for (const auto& rank : r.ranks) {
    const RankCounts c = count(rank);
    events += c.copied + c.added();
  }
  if (r.unknown_records)
    std::printf("%llu records of kinds libhtrace does not write were left out\n",
                static_cast<unsigned long long>(r.unknown_records));
  std::printf("salvaged archive: '%s' (%llu events)\n", out.c_str(),
              static_cast<unsigned long long>(events));
}

} // namespace

int main(int argc, char** argv) {
  // A file-size limit (ulimit -f) must fail the write that crosses it, reported like a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app(kDescription, "htrace-salvage");
  htrace::cli::configure(app);
  app.footer(kExitCodes);
  htrace::salvage::Options options;
  app.add_option("IN", options.input, "archive directory of the failed run (never modified)");
  app.add_option("OUT", options.output, "new archive directory (written atomically)");
  const htrace::cli::Outcome outcome = htrace::cli::parse(app, argc, argv, [&]() -> std::string {
    return options.input.empty() || options.output.empty() ? "expected IN and OUT" : "";
  });
  if (!outcome.run()) return htrace::cli::report(outcome);
  try {
    print_summary(htrace::salvage::salvage_archive(options), options.output);
    return htrace::kExitSuccess;
  } catch (const htrace::Error& e) {
    std::fprintf(stderr, "htrace-salvage: error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "htrace-salvage: internal error: %s\n", e.what());
    return htrace::kExitInternal;
  }
}
