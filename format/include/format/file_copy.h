// A whole file copied by the kernel (sendfile), or written from bytes read already, for tools that
// carry an input's file into their output unchanged (a location's local definition file beside its
// copied event file). Plain open, sendfile and write: per location, at 16,384 of them,
// std::filesystem's checks (three stats and a chmod) cost more than the copy.
#ifndef HTRACE_FORMAT_FILE_COPY_H
#define HTRACE_FORMAT_FILE_COPY_H

#include <string>
#include <string_view>

namespace htrace::format {

// Copies `from` to `to` (created or truncated, mode 0644 before the umask). Returns false if
// `from` does not exist; throws an input Error (format/error.h) if it cannot be opened, an output
// Error naming both files if the copy fails.
bool copy_whole_file(const std::string& from, const std::string& to);

// Writes `bytes` as the whole file `to` (created or truncated, mode 0644 before the umask): a
// file the tool has read already. Throws an output Error naming `to` if it cannot.
void write_whole_file(const std::string& to, std::string_view bytes);

} // namespace htrace::format
#endif
