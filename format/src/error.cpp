#include "format/error.h"

namespace htrace {

ErrorKind error_kind(const std::exception& e, ErrorKind fallback) {
  if (const auto* error = dynamic_cast<const Error*>(&e)) return error->kind();
  if (dynamic_cast<const std::runtime_error*>(&e)) return fallback;
  return ErrorKind::Internal; // std::bad_alloc, std::logic_error: nothing the user can fix
}

} // namespace htrace
