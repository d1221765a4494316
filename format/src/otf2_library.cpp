#include "format/otf2_library.h"

#include <array>
#include <cstdarg>
#include <cstdio>

namespace htrace::format {
namespace {

OTF2_FlushType flush_always(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) {
  return OTF2_FLUSH;
}

// The first OTF2 diagnostic not yet reported (OTF2 calls the handler on the failing thread).
thread_local std::string t_first_otf2_error;

OTF2_ErrorCode note_otf2_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code,
                               const char* format, va_list args) {
  if (t_first_otf2_error.empty() && format) {
    std::array<char, 512> text{};
    std::vsnprintf(text.data(), text.size(), format, args);
    // For a failed POSIX call the code is errno's (OTF2_ERROR_ENOSPC: "No space left on device").
    t_first_otf2_error = std::string(text.data()) + " (" + OTF2_Error_GetDescription(code) + ")";
  }
  return code;
}

} // namespace

// No post-flush callback: OTF2 then writes no BufferFlush record into the events it flushes.
const OTF2_FlushCallbacks kFlushAlways = {flush_always, nullptr};

void quiet_otf2_errors() {
  OTF2_Error_RegisterCallback(note_otf2_error, nullptr);
}

std::string otf2_cause(OTF2_ErrorCode rc) {
  std::string cause = std::string(OTF2_Error_GetName(rc)) + ": " + OTF2_Error_GetDescription(rc);
  if (!t_first_otf2_error.empty()) cause += "; first: " + t_first_otf2_error;
  t_first_otf2_error.clear();
  return cause;
}

bool otf2_diagnostics_pending() {
  return !t_first_otf2_error.empty();
}

void forget_otf2_diagnostics() {
  t_first_otf2_error.clear();
}

} // namespace htrace::format
