#include "summary.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace htrace::salvage {
namespace {

// Ranks listed one by one up to this many; beyond, grouped by how they ended, a screenful at any
// scale.
constexpr std::size_t kRanksListed = 16;
// In a grouped summary: the runs of consecutive ranks named per group, the damaged files named.
constexpr std::size_t kRunsNamed = 8, kDamagedNamed = 8;

struct RankCounts {
  std::uint64_t copied = 0, closed = 0, cut_locations = 0;
  std::vector<const Result::Location*> damaged;
  // Per cut-off location: the marker's Enter and Leave, and a Leave per open region.
  std::uint64_t added() const { return 2 * cut_locations + closed; }
};

RankCounts count(const Result::Rank& rank) {
  RankCounts c;
  for (const auto& loc : rank.locations) {
    c.copied += loc.events;
    c.closed += loc.closed;
    if (loc.events && !rank.finished) ++c.cut_locations;
    if (loc.file_damaged) c.damaged.push_back(&loc);
  }
  return c;
}

std::string damage_text(const Result::Location& loc) {
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

void print_each_rank(const Result& r, const std::vector<RankCounts>& counts) {
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const Result::Rank& rank = r.ranks[i];
    const RankCounts& c = counts[i];
    std::string line = "rank " + std::to_string(rank.rank) + ": " + rank.end + ": " +
                       std::to_string(c.copied) + " events";
    if (!rank.finished && c.cut_locations) line += cut_off_text(c.closed);
    for (const auto* loc : c.damaged)
      line += "; " + damage_text(*loc);
    std::printf("%s\n", line.c_str());
  }
}

void print_ranks_grouped(const Result& r, const std::vector<RankCounts>& counts) {
  struct Group {
    std::vector<int> ranks;
    std::uint64_t copied = 0, closed = 0;
  };
  // By how a rank ended, and whether it was cut off with events.
  std::map<std::pair<std::string, bool>, Group> groups;
  std::vector<std::pair<int, const Result::Location*>> damaged;
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const Result::Rank& rank = r.ranks[i];
    const RankCounts& c = counts[i];
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

} // namespace

void print_summary(const Result& r, const std::string& out) {
  std::vector<RankCounts> counts;
  counts.reserve(r.ranks.size());
  std::uint64_t events = 0;
  for (const auto& rank : r.ranks) {
    counts.push_back(count(rank));
    events += counts.back().copied + counts.back().added();
  }
  if (r.ranks.size() <= kRanksListed)
    print_each_rank(r, counts);
  else
    print_ranks_grouped(r, counts);
  if (r.unknown_records)
    std::printf("%llu records of kinds libhtrace does not write were left out\n",
                static_cast<unsigned long long>(r.unknown_records));
  std::printf("salvaged archive: '%s' (%llu events)\n", out.c_str(),
              static_cast<unsigned long long>(events));
}

} // namespace htrace::salvage
