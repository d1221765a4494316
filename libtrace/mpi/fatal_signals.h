// On SIGSEGV/SIGBUS/SIGFPE/SIGILL, and SIGTERM/SIGINT when their action is the default: write what
// was recorded (once), then let the previous disposition handle the signal. A watchdog alarm
// bounds the flush so it never hangs.
#pragma once

#include "common/blocked_signals.h"

namespace htrace::mpi {
void install_fatal_signal_handlers();
void remove_fatal_signal_handlers();

/// Around PMPI_Init: the threads MPI starts there (Open MPI's progress and event threads) are
/// born with SIGTERM and SIGINT blocked, so a batch system's SIGTERM runs the handler on an
/// application thread. On MPI's event thread, woken by the same failure that brought the signal,
/// it would flush while the main thread goes on making calls it no longer records. With
/// HTRACE_ENABLE=0 nothing changes.
BlockedSignals term_signals_off_mpi_threads();
} // namespace htrace::mpi
