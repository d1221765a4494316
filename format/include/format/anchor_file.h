// Finding an archive's OTF2 anchor file (traces.otf2), and checking it before OTF2 loads it.
// OTF2_AnchorFile_Load (OTF2 3.0) trusts the counts it reads: a damaged property count makes it
// allocate for up to 2^32 properties, or overflow that allocation and corrupt the heap. Here the
// file is walked as OTF2 walks it, with every count bounded by the bytes that are left.
#ifndef HTRACE_FORMAT_ANCHOR_FILE_H
#define HTRACE_FORMAT_ANCHOR_FILE_H

#include <string>

namespace htrace::format {

// IN may be an archive directory holding one .otf2 anchor file, or that file; returns the
// anchor path. Throws an input Error (format/error.h) naming IN otherwise.
std::string find_anchor(const std::string& input);

// "" if the anchor file at `path` is well formed (and OTF2 may load it), else why not, with the
// byte offset where the damage shows. Reads at most 16 MiB: no anchor file is larger.
std::string anchor_file_damage(const std::string& path);

} // namespace htrace::format
#endif
