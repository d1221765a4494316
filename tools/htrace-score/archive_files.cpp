#include "archive_files.h"

#include "format/error.h"

#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace htrace::score {

ArchiveFiles measure_archive_files(const std::string& anchor) {
  ArchiveFiles f;
  const fs::path anchor_path = fs::absolute(anchor);
  const fs::path dir = anchor_path.parent_path();
  const fs::path events = fs::path(anchor_path).replace_extension();
  const fs::path global_defs = fs::path(anchor_path).replace_extension(".def");
  f.anchor = anchor_path.string();
  f.event_dir = events.string();
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, ec), end;
  if (ec)
    throw input_error("'" + dir.string() + "': cannot list the archive (" + ec.message() + ")");
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code size_ec;
    if (!it->is_regular_file(size_ec)) continue;
    const std::uint64_t size = it->file_size(size_ec);
    if (size_ec) continue;
    const fs::path& p = it->path();
    if (p == anchor_path) {
      f.anchor_bytes += size;
    } else if (p == global_defs) {
      f.global_def_bytes += size;
    } else if (p.parent_path() == events && p.extension() == ".evt") {
      f.event_bytes += size;
      ++f.event_files;
    } else if (p.parent_path() == events && p.extension() == ".def") {
      f.local_def_bytes += size;
      ++f.local_def_files;
    } else {
      f.other_bytes += size;
    }
  }
  if (ec)
    throw input_error("'" + dir.string() + "': cannot list the archive (" + ec.message() + ")");
  return f;
}

} // namespace htrace::score
