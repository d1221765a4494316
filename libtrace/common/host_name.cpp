#include "common/host_name.h"

#include <functional>
#include <unistd.h>

namespace htrace {

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown";
  return name;
}

std::int64_t host_name_hash() {
  return static_cast<std::int64_t>(std::hash<std::string>{}(host_name()));
}

} // namespace htrace
