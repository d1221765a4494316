// On SIGSEGV/SIGBUS/SIGFPE/SIGILL, and SIGTERM/SIGINT when their action is the default: write what
// was recorded (once), then let the previous disposition handle the signal. A watchdog alarm
// bounds the flush so it never hangs.
#pragma once

namespace htrace::mpi {
void install_fatal_signal_handlers();
void remove_fatal_signal_handlers();
} // namespace htrace::mpi
