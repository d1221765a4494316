#include "record/archive_name.h"

#include <cstring>
#include <ctime>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace::record {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

/// mkdir -p; returns "" or the reason.
std::string make_directories(const std::string& dir) {
  if (dir.empty()) return "";
  std::string partial;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty() || exists(partial)) continue;
    if (::mkdir(partial.c_str(), 0777) != 0 && errno != EEXIST) return std::strerror(errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return std::strerror(errno);
  return "";
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  return ::remove(path);
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty() || dir == ".") return name;
  return dir.back() == '/' ? dir + name : dir + "/" + name;
}

/// First name of the form base, base-1, base-2, ... that does not exist in dir.
std::string fresh_path(const std::string& dir, const std::string& base) {
  std::string path = join(dir, base);
  for (int i = 1; exists(path); ++i)
    path = join(dir, base + "-" + std::to_string(i));
  return path;
}

std::string default_base(const std::string& program, long now) {
  const std::time_t t = static_cast<std::time_t>(now);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  return "htrace-" + program + "-" + stamp;
}

} // namespace

std::string program_name() {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return "program";
  exe[n] = '\0';
  const char* slash = std::strrchr(exe, '/');
  return slash ? slash + 1 : exe;
}

ArchiveChoice choose_archive_path(const Options& options, const std::string& program, long now) {
  ArchiveChoice choice;
  const std::string dir = options.archive_dir.empty() ? "." : options.archive_dir;
  if (std::string why = make_directories(dir); !why.empty()) {
    choice.error =
        "archive directory '" + dir + "' is not usable: " + why + "; the application runs untraced";
    return choice;
  }
  const std::string base = default_base(program, now);
  if (options.archive_name.empty()) {
    choice.path = fresh_path(dir, base);
    return choice;
  }
  const std::string wanted = join(dir, options.archive_name);
  if (!exists(wanted)) {
    choice.path = wanted;
    return choice;
  }
  // Only something that looks like an OTF2 archive is ever deleted.
  if (options.overwrite && exists(wanted + "/traces.otf2")) {
    if (::nftw(wanted.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0) {
      choice.path = wanted;
      choice.note = "replaced the existing archive '" + wanted + "' (HTRACE_OVERWRITE=1)";
      return choice;
    }
    choice.path = fresh_path(dir, base);
    choice.note = "could not remove '" + wanted + "' (" + std::strerror(errno) +
                  "); tracing into '" + choice.path + "' instead";
    return choice;
  }
  choice.path = fresh_path(dir, base);
  choice.note = "'" + wanted + "' exists; tracing into '" + choice.path + "' instead" +
                (options.overwrite ? " (it is not an htrace archive, so HTRACE_OVERWRITE does not "
                                     "replace it)"
                                   : " (set HTRACE_OVERWRITE=1 to replace it)");
  return choice;
}

} // namespace htrace::record
