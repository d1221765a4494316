#include "huge_page_heap.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <gnu/libc-version.h>
#include <string>
#include <unistd.h>

namespace htrace::tools {
namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";

// Whether the kernel gives huge pages only to memory advised to use them.
bool huge_pages_on_request() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  return std::getline(mode, line) && line.find("[madvise]") != std::string::npos;
}

bool glibc_knows_the_tunable() {
  int major = 0, minor = 0;
  return std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
         (major > 2 || (major == 2 && minor >= 35));
}

} // namespace

void use_huge_page_heap(char** argv) {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, kTunable)) return;
  if (!huge_pages_on_request() || !glibc_knows_the_tunable()) return;
  std::string value = tunables && *tunables ? std::string(tunables) + ":" : std::string();
  value += std::string(kTunable) + "=1";
  if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // Not restarted: go on with the heap as it is (the variable stays, so nothing retries).
}

} // namespace htrace::tools
