// The OTF2 library as every htrace tool uses it: handles that close themselves, the flush
// callbacks a writer of complete archives needs, and OTF2's diagnostics kept as the cause of a
// failure instead of printed.
#ifndef HTRACE_FORMAT_OTF2_LIBRARY_H
#define HTRACE_FORMAT_OTF2_LIBRARY_H

#include <memory>
#include <otf2/otf2.h>
#include <string>

namespace htrace::format {

struct ReaderCloser {
  void operator()(OTF2_Reader* r) const { OTF2_Reader_Close(r); }
};
using ReaderPtr = std::unique_ptr<OTF2_Reader, ReaderCloser>;
struct ArchiveCloser {
  void operator()(OTF2_Archive* a) const { OTF2_Archive_Close(a); }
};
using ArchivePtr = std::unique_ptr<OTF2_Archive, ArchiveCloser>;

/// Flush callbacks for writing archives: always flush a full buffer (OTF2 drops events without
/// them), and record no BufferFlush event: htrace's writers copy or rebuild complete archives,
/// whose events are the input's, not live traces whose flushes cost the application time.
extern const OTF2_FlushCallbacks kFlushAlways;

/// OTF2 prints its own diagnostics; ours name the path and the location instead. After this call
/// the first diagnostic after an OTF2 call that fails is kept as its cause (errno's text for a
/// full disk: the error code OTF2 returns at the end of the chain says less). Process-wide.
void quiet_otf2_errors();
/// "NAME: description" of `rc`, with the first OTF2 diagnostic of this thread since the last call
/// (if any).
std::string otf2_cause(OTF2_ErrorCode rc);
/// Whether OTF2 gave a diagnostic on this thread since the last otf2_cause() or
/// forget_otf2_diagnostics() (some OTF2 calls report success after one).
bool otf2_diagnostics_pending();
void forget_otf2_diagnostics();

} // namespace htrace::format
#endif
