// Reaching HTRACE_BUDGET (see budget.h): the one log line of the rank and the producers' hooks.
#include "record/budget.h"

#include "common/log.h"
#include "record/recorder_state.h"

#include <array>

namespace htrace::record {
namespace {

// Fixed slots, no lock: hooks run inside a conversion on any thread, and a producer may register
// while another thread converts (the OMPT tool starts with libomp, whenever that is).
constexpr std::size_t kMaxBudgetHooks = 4;
std::array<std::atomic<void (*)()>, kMaxBudgetHooks> g_hooks{};

void run_hooks() {
  for (auto& slot : g_hooks)
    if (void (*hook)() = slot.load()) hook();
}

} // namespace

void add_budget_hook(void (*hook)()) {
  for (auto& slot : g_hooks) {
    void (*empty)() = nullptr;
    if (slot.compare_exchange_strong(empty, hook)) break;
  }
  // Registered after the cut: this producer stops now. (Hooks are idempotent: a registration
  // racing with the cut may run its hook twice.)
  if (state().budget.reached()) hook();
}

bool budget_reached() {
  return state().budget.reached();
}

LocalTime budget_cut() {
  return state().budget.cut();
}

void reach_budget(State& s, clock::Stamp cut) {
  s.budget.set_cut(cut);
  const double seconds =
      static_cast<double>(clock::posix_now(CLOCK_MONOTONIC) - s.start_monotonic_ns) * 1e-9;
  log::rank_warning("rank %d reached HTRACE_BUDGET=%llu bytes of trace events %.3f s after tracing "
                    "started; recording stops on this rank, the program runs on",
                    s.rank, static_cast<unsigned long long>(s.budget.limit()), seconds);
  run_hooks();
}

} // namespace htrace::record
