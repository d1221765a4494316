#include "huge_page_heap.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gnu/libc-version.h>
#include <unistd.h>

namespace htrace::tools {

std::optional<std::string> huge_page_tunables(const char* tunables, const std::string& thp_mode,
                                              const char* glibc_version) {
  constexpr const char* kTunable = "glibc.malloc.hugetlb";
  if (tunables && std::strstr(tunables, kTunable)) return std::nullopt;
  if (thp_mode.find("[madvise]") == std::string::npos) return std::nullopt;
  int major = 0, minor = 0;
  if (!glibc_version || std::sscanf(glibc_version, "%d.%d", &major, &minor) != 2 ||
      (major == 2 && minor < 35) || major < 2)
    return std::nullopt;
  std::string value = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  return value + kTunable + "=1";
}

void use_huge_page_heap(char** argv) {
  // Under valgrind /proc/self/exe is valgrind's own tool: the program stays as it was started.
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) return;
  std::ifstream file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(file, mode);
  const auto tunables =
      huge_page_tunables(std::getenv("GLIBC_TUNABLES"), mode, gnu_get_libc_version());
  if (!tunables || ::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Not restarted: go on with the heap as it is (the variable stays, so nothing retries).
}

} // namespace htrace::tools
