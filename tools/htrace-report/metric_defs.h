// The metric definitions of an OTF2 archive, as the Perfetto export draws Metric records: each
// metric member's name, unit, base and exponent, and for every metric a Metric record can name
// (a metric class, or a metric instance of one) the members its values belong to. Read apart
// from ArchiveDefs, which the HTML report shares and which has no use for them.
#pragma once

#include <cstdint>
#include <map>
#include <otf2/OTF2_Definitions.h>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <set>
#include <string>
#include <vector>

namespace htrace::report {

struct MetricMember {
  std::string name;
  std::string unit;
  OTF2_Base base = OTF2_BASE_DECIMAL;
  std::int64_t exponent = 0; ///< a value means value * base^exponent units
};

struct MetricDefs {
  std::map<OTF2_MetricMemberRef, MetricMember> members;
  /// Metric class or instance -> its (class's) members, in the order of a Metric record's values.
  std::map<OTF2_MetricRef, std::vector<OTF2_MetricMemberRef>> metrics;
  std::set<OTF2_MetricRef> instances; ///< which of those are metric instances
};

/// Reads the metric definitions of `archive`; throws an input Error naming it on failure.
MetricDefs read_metric_defs(const std::string& archive);

} // namespace htrace::report
