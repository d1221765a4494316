// htrace_version(): the version of the loaded libhtrace.so, for programs that link or dlopen it
// (the macro in <htrace/version.h> is only the version they were compiled against).
#include <htrace/version.h>

extern "C" __attribute__((visibility("default"))) const char* htrace_version(void) {
  return HTRACE_VERSION_STRING;
}
