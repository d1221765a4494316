// What went wrong, for the exit code: scripts must tell a bad input from a failed write from a
// bug. Every error of the engine is raised on all correction ranks together (exchange.h), so
// every rank exits with the same code.
#ifndef HTRACE_CORRECT_ERROR_H
#define HTRACE_CORRECT_ERROR_H

#include <stdexcept>
#include <string>

namespace htrace::correct {

// htrace-correct's exit codes (documented in correct/README.md and --help).
enum ExitCode : int {
  kExitSuccess = 0,
  kExitViolations = 1, // corrected, but clock-condition violations remain
  kExitUsage = 2,      // bad command line
  kExitInput = 3,      // IN cannot be read or is inconsistent (nothing written)
  kExitOutput = 4,     // OUT cannot be created or written (IN untouched, OUT unchanged)
  kExitInternal = 5,   // a bug, or a limit of htrace-correct exceeded
};

enum class ErrorKind : int {
  Input = kExitInput,
  Output = kExitOutput,
  Internal = kExitInternal,
};

class Error : public std::runtime_error {
public:
  Error(ErrorKind kind, const std::string& what, bool agreed = false)
      : std::runtime_error(what), kind_(kind), agreed_(agreed) {}
  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }
  // Raised on every rank together (fail_together); a rank-local error cannot be unwound through
  // collective clean-up (the others would wait in it), so the driver aborts the job instead.
  bool agreed() const { return agreed_; }

private:
  ErrorKind kind_;
  bool agreed_;
};

inline Error input_error(const std::string& what) {
  return Error(ErrorKind::Input, what);
}
inline Error output_error(const std::string& what) {
  return Error(ErrorKind::Output, what);
}
inline Error internal_error(const std::string& what) {
  return Error(ErrorKind::Internal, what);
}

// The kind of any exception: an Error's own, `fallback` for other std::exceptions (which name no
// kind), Internal for std::bad_alloc and the like.
ErrorKind error_kind(const std::exception& e, ErrorKind fallback);

// True once an error has been raised on every rank together: clean-up that calls collectives
// (closing an OTF2 archive) may run while it unwinds. A rank-local exception must skip it.
bool unwinding_together();

} // namespace htrace::correct
#endif
