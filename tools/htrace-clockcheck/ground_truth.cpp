#include "ground_truth.h"

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace htrace::clockcheck {

std::int64_t GroundTruth::offset_of(int rank) const {
  const std::size_t node = static_cast<std::size_t>(rank / ranks_per_node);
  if (node >= node_offsets_ns.size()) return 0;
  return node_offsets_ns[node] - node_offsets_ns[0];
}

bool parse_seconds_list(const std::string& text, std::vector<std::int64_t>& out) {
  out.clear();
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    // Decimal seconds to integer ns without a double: sign, whole part, up to 9 fraction digits.
    std::size_t i = 0;
    bool negative = false;
    if (i < item.size() && (item[i] == '-' || item[i] == '+')) negative = item[i++] == '-';
    std::int64_t whole = 0, frac = 0;
    int digits = 0, frac_digits = 0;
    for (; i < item.size() && std::isdigit(static_cast<unsigned char>(item[i])); ++i, ++digits)
      whole = whole * 10 + (item[i] - '0');
    if (i < item.size() && item[i] == '.') {
      for (++i; i < item.size() && std::isdigit(static_cast<unsigned char>(item[i]));
           ++i, ++frac_digits) {
        if (frac_digits >= 9) return false;
        frac = frac * 10 + (item[i] - '0');
      }
    }
    if (i != item.size() || digits + frac_digits == 0 || digits > 9) return false;
    for (int k = frac_digits; k < 9; ++k)
      frac *= 10;
    const std::int64_t ns = whole * 1'000'000'000 + frac;
    out.push_back(negative ? -ns : ns);
  }
  return !out.empty();
}

std::optional<GroundTruth> ground_truth_from_environment(std::string& error) {
  const char* offsets = std::getenv("HTRACE_CLUSTER_OFFSETS");
  if (!offsets || !*offsets) return std::nullopt;
  GroundTruth truth;
  if (!parse_seconds_list(offsets, truth.node_offsets_ns)) {
    error = std::string("HTRACE_CLUSTER_OFFSETS='") + offsets + "' is not a list of seconds";
    return std::nullopt;
  }
  const char* per_node = std::getenv("HTRACE_CLUSTER_RANKS_PER_NODE");
  char* end = nullptr;
  const long n = per_node ? std::strtol(per_node, &end, 10) : 0;
  if (!per_node || *end != '\0' || n < 1) {
    error = "HTRACE_CLUSTER_RANKS_PER_NODE must be a positive integer when HTRACE_CLUSTER_OFFSETS "
            "is set";
    return std::nullopt;
  }
  truth.ranks_per_node = static_cast<int>(n);
  return truth;
}

} // namespace htrace::clockcheck
