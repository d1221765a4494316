#include "format/output_path.h"

#include "format/error.h"

#include <cerrno>
#include <cstring>
#include <system_error>
#include <unistd.h>

namespace htrace::format {

namespace fs = std::filesystem;

fs::path output_path(const std::string& output) {
  const fs::path out = fs::absolute(fs::path(output)).lexically_normal();
  return out.filename().empty() ? out.parent_path() : out;
}

void check_output_parent(const fs::path& out, const std::string& output) {
  std::error_code ec;
  if (!fs::is_directory(out.parent_path(), ec))
    throw output_error("'" + output + "': parent directory does not exist");
  if (::access(out.parent_path().c_str(), W_OK | X_OK) != 0)
    throw output_error("'" + out.parent_path().string() +
                       "': cannot create OUT there: " + std::strerror(errno));
}

} // namespace htrace::format
