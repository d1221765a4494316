// Where a tool writes a new archive: OUT as an absolute path, and the checks that let a run fail
// before its work, not after it (a missing or unwritable parent directory).
#ifndef HTRACE_FORMAT_OUTPUT_PATH_H
#define HTRACE_FORMAT_OUTPUT_PATH_H

#include <filesystem>
#include <string>

namespace htrace::format {

// `output` as an absolute path without a trailing separator (its parent holds the temporary
// archive the tools write first).
std::filesystem::path output_path(const std::string& output);

// Throws an output Error (format/error.h) naming `output` if the parent directory of `out` (its
// output_path) does not exist or cannot take a new directory.
void check_output_parent(const std::filesystem::path& out, const std::string& output);

} // namespace htrace::format
#endif
