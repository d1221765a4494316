// What went wrong, for the exit code: scripts must tell a bad input from a failed write from a
// bug. Every tool that reads archives (htrace-correct, htrace-salvage, htrace-report) exits with
// these codes, documented in their --help and READMEs. The names live in namespace htrace, above
// the tools' own namespaces, because every tool uses them.
#ifndef HTRACE_FORMAT_ERROR_H
#define HTRACE_FORMAT_ERROR_H

#include <stdexcept>
#include <string>

namespace htrace {

enum ExitCode : int {
  kExitSuccess = 0,
  kExitViolations = 1, // htrace-correct: corrected, but clock-condition violations remain
  kExitUsage = 2,      // bad command line
  kExitInput = 3,      // the input cannot be read or is inconsistent (nothing written)
  kExitOutput = 4,     // the output cannot be created or written (input untouched)
  kExitInternal = 5,   // a bug, or a limit of the tool exceeded
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
  // Raised on every rank of a parallel tool together (htrace-correct's fail_together); a
  // rank-local error cannot be unwound through collective clean-up (the others would wait in
  // it), so the driver aborts the job instead.
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

} // namespace htrace
#endif
