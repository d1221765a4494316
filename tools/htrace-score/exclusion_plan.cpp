#include "exclusion_plan.h"

#include <algorithm>

namespace htrace::score {

std::string ExclusionPlan::htrace_value() const {
  std::string value;
  for (const ExclusionStep& s : steps)
    value += (value.empty() ? "" : ",") + s.row->name;
  return value;
}

std::string ExclusionPlan::scorep_filter() const {
  std::string text = "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE\n";
  for (const ExclusionStep& s : steps)
    text += "    " + s.row->name + "\n";
  return text + "SCOREP_REGION_NAMES_END\n";
}

ExclusionPlan plan_exclusions(const std::vector<RegionRow>& rows, const Scale& scale,
                              double projection, std::uint64_t limit) {
  ExclusionPlan plan;
  plan.limit = limit;
  plan.size_before = plan.size_after = projection;
  std::vector<ExclusionStep> candidates;
  for (const RegionRow& row : rows)
    if (row.mpi != nullptr && row.mpi->excludable && row.removable_bytes > 0)
      candidates.push_back({&row, scaled(row, row.removable_bytes, scale), 0});
  std::sort(candidates.begin(), candidates.end(),
            [](const ExclusionStep& a, const ExclusionStep& b) {
              return a.removed != b.removed ? a.removed > b.removed : a.row->name < b.row->name;
            });
  for (ExclusionStep& step : candidates) {
    if (plan.size_after <= double(limit)) break;
    plan.size_after -= step.removed;
    step.size_after = plan.size_after;
    plan.steps.push_back(step);
  }
  plan.reached = plan.size_after <= double(limit);
  return plan;
}

} // namespace htrace::score
