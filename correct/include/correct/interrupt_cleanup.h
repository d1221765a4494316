// Removing the temporary output when htrace-correct is interrupted (Ctrl-C, a batch system's
// SIGTERM, a closed terminal), so an interrupted run leaves nothing behind, as a failed one does.
#ifndef HTRACE_CORRECT_INTERRUPT_CLEANUP_H
#define HTRACE_CORRECT_INTERRUPT_CLEANUP_H

#include "common/blocked_signals.h"

#include <string>

namespace htrace::correct {

// On SIGINT, SIGTERM or SIGHUP, remove the directory tree `dir` (async-signal-safe, at most three
// levels deep: an OTF2 archive is two) and then end the process by that signal, as it would have
// ended without the handler. One directory at a time; a later call replaces it.
void remove_on_interrupt(const std::string& dir);
// The directory was committed or removed: an interrupt only ends the process.
void forget_on_interrupt();

// While the returned guard lives, the interrupt signals are blocked, so threads started then
// (MPI's progress threads, started in MPI_Init) have them blocked too and the handler always runs
// on the thread that writes the output: nothing is written while it removes. Take it before
// MPI_Init, end it after.
BlockedSignals interrupts_stay_on_this_thread();

} // namespace htrace::correct

#endif
