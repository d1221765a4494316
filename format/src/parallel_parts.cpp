#include "format/parallel_parts.h"

#include <algorithm>
#include <exception>
#include <sched.h>
#include <thread>
#include <vector>

namespace htrace::format {

size_t cores_to_run_on() {
  cpu_set_t set;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return static_cast<size_t>(CPU_COUNT(&set));
}

size_t parts_for(size_t items, size_t min_items, size_t max_parts) {
  return std::clamp<size_t>(std::min(cores_to_run_on(), max_parts), 1,
                            std::max<size_t>(items / std::max<size_t>(min_items, 1), 1));
}

void run_in_parts(size_t items, size_t parts,
                  const std::function<void(size_t part, size_t begin, size_t end)>& work) {
  parts = std::max<size_t>(parts, 1);
  if (parts == 1) return work(0, 0, items);
  std::vector<std::exception_ptr> errors(parts);
  const auto guarded = [&](size_t part) {
    try {
      work(part, items * part / parts, items * (part + 1) / parts);
    } catch (...) {
      errors[part] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(parts - 1);
  try {
    for (size_t part = 1; part < parts; ++part)
      threads.emplace_back(guarded, part);
  } catch (const std::exception&) {
    // No more threads (std::system_error, or no memory for one): the parts not started run here.
    for (size_t part = threads.size() + 1; part < parts; ++part)
      guarded(part);
  }
  guarded(0);
  for (std::thread& t : threads)
    t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

} // namespace htrace::format
