// A task's OTF2 identity (team, creating thread, generation) packed into OMPT's task_data. The
// team is the executing thread's current team: explicit tasks run only in their binding team.
// Generation 0 names a thread's implicit task; explicit tasks count from 1 per creating thread.
#pragma once

#include <cstdint>

namespace htrace::ompt {

constexpr std::uint64_t kTaskValid = 1ull << 63;
constexpr int kGenerationBits = 40;

inline std::uint64_t task_identity(std::uint32_t creating_thread, std::uint64_t generation) {
  return kTaskValid | (static_cast<std::uint64_t>(creating_thread & 0x7fffff) << kGenerationBits) |
         (generation & ((1ull << kGenerationBits) - 1));
}
inline bool task_identity_valid(std::uint64_t id) {
  return (id & kTaskValid) != 0;
}
inline std::uint32_t task_creating_thread(std::uint64_t id) {
  return static_cast<std::uint32_t>((id & ~kTaskValid) >> kGenerationBits);
}
inline std::uint32_t task_generation(std::uint64_t id) {
  return static_cast<std::uint32_t>(id);
}

} // namespace htrace::ompt
