// Writing a whole file so that readers never see a half-written one (temporary name + rename).
#ifndef HTRACE_COMMON_ATOMIC_FILE_H
#define HTRACE_COMMON_ATOMIC_FILE_H

#include <string>

namespace htrace {

/// Writes `text` to `path` atomically; false and what failed, with the system's reason, in
/// `error` on failure (the temporary file is removed then).
bool write_file_atomically(const std::string& path, const std::string& text, std::string& error);

} // namespace htrace
#endif
