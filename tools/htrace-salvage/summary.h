// What htrace-salvage says on stdout: how each rank ended and how many events it kept, its
// damaged event files, the archive written. Beyond a few ranks the ranks are grouped by how they
// ended and the damaged files named up to a few: a screenful at any scale.
#pragma once

#include "salvage.h"

#include <string>

namespace htrace::salvage {

/// The summary of `r`, the archive written to `out`.
void print_summary(const Result& r, const std::string& out);

} // namespace htrace::salvage
