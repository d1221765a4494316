// htrace-score's output: the text report (scorep-score's layout: the model, the projection, then
// families, functions and ranks with their shares; text_report.cpp) and the same figures as JSON
// (json_report.cpp).
#pragma once

#include "exclusion_plan.h"
#include "projection.h"

#include <cstddef>
#include <optional>
#include <string>

namespace htrace::score {

struct ScoreResult {
  const ArchiveScore* archive = nullptr;
  SizeModel model;
  Projection projection;
  Scale scale;
  double work_factor = 0; ///< --work-factor: T is this many times the archive's mean window
  std::optional<ExclusionPlan> plan;
};

/// `top`: the most functions and ranks the text lists (the JSON lists every function, and every
/// rank up to `kRanksListed`).
std::string text_report(const ScoreResult& r, std::size_t top);
std::string json_report(const ScoreResult& r);

/// Ranks listed one by one up to this many; beyond, their distribution and the top ones.
constexpr std::size_t kRanksListed = 16;

} // namespace htrace::score
