#include "mpi/fatal_signals.h"

#include "common/options.h"
#include "mpi/wrapper_call.h"
#include "record/recorder.h"

#include <atomic>
#include <csignal>
#include <ctime>
#include <pthread.h>
#include <unistd.h>

namespace htrace::mpi {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTERM, SIGINT};
constexpr unsigned kFlushSeconds = 10; ///< watchdog: after this the process dies of SIGALRM
constexpr std::size_t kCount = sizeof kSignals / sizeof kSignals[0];
struct sigaction g_previous[kCount];
bool g_hooked[kCount] = {};
std::atomic<bool> g_installed{false};
std::atomic<bool> g_flushed{false};
std::atomic<bool> g_flush_done{false};

const char* reason(int sig) {
  switch (sig) {
  case SIGSEGV:
    return "SIGSEGV";
  case SIGBUS:
    return "SIGBUS";
  case SIGFPE:
    return "SIGFPE";
  case SIGILL:
    return "SIGILL";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "SIGINT";
  }
}

void restore_previous() {
  for (std::size_t i = 0; i < kCount; ++i)
    if (g_hooked[i]) sigaction(kSignals[i], &g_previous[i], nullptr);
}

void ignore_hooked_termination_signals() {
  for (std::size_t i = 0; i < kCount; ++i)
    if (g_hooked[i] && (kSignals[i] == SIGTERM || kSignals[i] == SIGINT))
      signal(kSignals[i], SIG_IGN);
}

// Faults end the process whatever handler runs (Open MPI's prints a backtrace first). SIGINT and
// SIGTERM are only fatal with the default action: a program that handles or ignores them keeps
// its tracing and its own behaviour.
bool should_hook(int sig, const struct sigaction& current) {
  if (sig != SIGINT && sig != SIGTERM) return true;
  return !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_DFL;
}

void on_fatal_signal(int sig) {
  // A signal from outside that lands while this thread converts its own full buffer comes back
  // when the conversion is done (under a millisecond): interrupted inside OTF2, the buffer could
  // not be written. Faults cannot wait; they lose that buffer.
  if ((sig == SIGTERM || sig == SIGINT) && record::defer_signal_during_own_flush(sig)) return;
  // Restore first: a second fault inside the flush then ends the process the ordinary way. A
  // batch system may repeat SIGTERM (one did at a Slurm time limit), on any thread: a repeat
  // must not end the process in the middle of the flush, so termination signals are ignored
  // until it is done. The watchdog and SIGKILL still bound it.
  restore_previous();
  ignore_hooked_termination_signals();
  if (!g_flushed.exchange(true)) {
    g_wrappers.tracing.store(false, std::memory_order_relaxed);
    signal(SIGALRM, SIG_DFL);
    alarm(kFlushSeconds);
    record::emergency_flush(reason(sig));
    alarm(0);
    g_flush_done.store(true);
  } else {
    // Another thread is flushing (its own nested faults never get here): let it finish.
    const struct timespec tick = {0, 1000000};
    for (unsigned ms = 0; !g_flush_done.load() && ms < kFlushSeconds * 1000; ++ms)
      nanosleep(&tick, nullptr);
  }
  restore_previous();
  raise(sig); // delivered to the previous handler (or the default action) on return
}

} // namespace

void install_fatal_signal_handlers() {
  if (g_installed.exchange(true)) return;
  struct sigaction action = {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_NODEFER;
  for (std::size_t i = 0; i < kCount; ++i) {
    if (sigaction(kSignals[i], nullptr, &g_previous[i]) != 0 ||
        !should_hook(kSignals[i], g_previous[i]))
      continue;
    g_hooked[i] = sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

void remove_fatal_signal_handlers() {
  if (g_installed.exchange(false)) restore_previous();
}

BlockedSignals term_signals_off_mpi_threads() {
  return BlockedSignals({SIGTERM, SIGINT}, run_options().options.enable);
}

} // namespace htrace::mpi
