// This machine's host name, as the archive records it and as ranks compare it to find their node.
#ifndef HTRACE_COMMON_HOST_NAME_H
#define HTRACE_COMMON_HOST_NAME_H

#include <cstdint>
#include <string>

namespace htrace {

/// gethostname(), or "unknown" if it fails.
std::string host_name();
/// A hash of host_name(): ranks with equal hashes run on one node.
std::int64_t host_name_hash();

} // namespace htrace
#endif
