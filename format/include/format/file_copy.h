// A whole file copied by the kernel (sendfile), for tools that carry an input's file into their
// output unchanged (a location's local definition file beside its copied event file). Plain open
// and sendfile: per location, at 16,384 of them, std::filesystem's checks (three stats and a
// chmod) cost more than the copy.
#ifndef HTRACE_FORMAT_FILE_COPY_H
#define HTRACE_FORMAT_FILE_COPY_H

#include <string>

namespace htrace::format {

// Copies `from` to `to` (created or truncated, mode 0644 before the umask). Returns false if
// `from` does not exist; throws an input Error (format/error.h) if it cannot be opened, an output
// Error naming both files if the copy fails.
bool copy_whole_file(const std::string& from, const std::string& to);

} // namespace htrace::format
#endif
