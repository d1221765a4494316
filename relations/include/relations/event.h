// How the relation rules name events: by the caller's handle, and with their role in a relation.
#ifndef HTRACE_RELATIONS_EVENT_H
#define HTRACE_RELATIONS_EVENT_H

#include <cstdint>

namespace htrace::relations {

/// The caller's handle of an event: htrace-correct's event index in its location, htrace-report's
/// timestamp in ns. The rules only store and hand it back.
using Event = std::int64_t;

/// An event's part in a relation: it contributes (the receivers wait for it) or receives.
enum class Role : std::uint8_t { Contribute, Receive };

} // namespace htrace::relations
#endif
