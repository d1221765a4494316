#include "format/anchor_file.h"

#include "format/error.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <vector>

namespace htrace::format {
namespace {

// The anchor file's layout, as OTF2 writes and reads it (one unchunked buffer):
//   [3][byte order: 0x42 little, 0x23 big endian], "OTF2\0", anchor format (1 byte, >= 1), 38
//   bytes: trace format, version (3 bytes), event and definition chunk sizes (8 each), substrate,
//   compression, location and definition counts (8 each); machine, creator and description
//   (strings); from anchor format 2 a property count (4) with a name and a value string each, and
//   the trace id (8); from format 3 snapshot and thumbnail counts (4 each); in format 3 (the
//   newest) an END_OF_FILE byte (2) last.
constexpr size_t kMaxAnchorBytes = 16 << 20;
constexpr uint8_t kNewestAnchorFormat = 3, kEndOfFile = 2, kBufferHeader = 3;
constexpr uint8_t kLittleEndian = 0x42, kBigEndian = 0x23;
// OTF2_COMPRESSION_ZLIB, which OTF2's header marks deprecated: OTF2 still loads such an anchor.
constexpr uint8_t kCompressionZlib = 2;

class AnchorWalk {
public:
  explicit AnchorWalk(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  void set_swap(bool swap) { swap_ = swap; }
  bool string(std::string* out = nullptr) {
    const void* nul = std::memchr(bytes_.data() + at_, 0, bytes_.size() - at_);
    if (!nul) return false;
    const size_t end = static_cast<size_t>(static_cast<const uint8_t*>(nul) - bytes_.data());
    if (out) out->assign(reinterpret_cast<const char*>(bytes_.data() + at_), end - at_);
    at_ = end + 1;
    return true;
  }
  template <class T> bool value(T& out) {
    if (bytes_.size() - at_ < sizeof(T)) return false;
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, bytes_.data() + at_, sizeof(T));
    if (swap_) std::reverse(raw, raw + sizeof(T));
    std::memcpy(&out, raw, sizeof(T));
    at_ += sizeof(T);
    return true;
  }
  size_t at() const { return at_; }
  size_t left() const { return bytes_.size() - at_; }

private:
  const std::vector<uint8_t>& bytes_;
  size_t at_ = 0;
  bool swap_ = false;
};

std::string damage(const char* what, size_t at) {
  return std::string(what) + " at byte " + std::to_string(at);
}

} // namespace

std::string anchor_file_damage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "cannot open the anchor file";
  std::vector<uint8_t> bytes;
  char buffer[65536];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    bytes.insert(bytes.end(), buffer, buffer + in.gcount());
    if (bytes.size() > kMaxAnchorBytes) return "larger than any anchor file (16 MiB)";
  }
  AnchorWalk walk(bytes);
  uint8_t header = 0, order = 0;
  if (!walk.value(header) || !walk.value(order) || header != kBufferHeader ||
      (order != kLittleEndian && order != kBigEndian))
    return "not an OTF2 anchor file (no buffer header)";
  walk.set_swap(order == kBigEndian); // (a little-endian host)
  std::string magic;
  if (!walk.string(&magic) || magic != "OTF2") return "not an OTF2 anchor file (no magic)";
  uint8_t format = 0, trace_format, version[3], substrate, compression;
  uint64_t event_chunk, def_chunk, locations, definitions;
  if (!walk.value(format) || format == 0) return damage("invalid anchor format", walk.at());
  if (!(walk.value(trace_format) && walk.value(version) && walk.value(event_chunk) &&
        walk.value(def_chunk) && walk.value(substrate) && walk.value(compression) &&
        walk.value(locations) && walk.value(definitions)))
    return damage("the file ends inside its header", walk.at());
  // Within OTF2's chunk size limits, which its buffers enforce once they read (an undefined
  // definition chunk size passes here: OTF2 then refuses it cleanly). After the header, the magic,
  // the two formats and the version: bytes 12 and 20.
  const auto valid_chunk = [](uint64_t n) {
    return n >= OTF2_CHUNK_SIZE_MIN && n <= OTF2_CHUNK_SIZE_MAX;
  };
  if (!valid_chunk(event_chunk)) return damage("invalid event chunk size", 12);
  if (!valid_chunk(def_chunk) && def_chunk != OTF2_UNDEFINED_UINT64)
    return damage("invalid definition chunk size", 20);
  if (substrate != OTF2_SUBSTRATE_POSIX && substrate != OTF2_SUBSTRATE_SION &&
      substrate != OTF2_SUBSTRATE_NONE)
    return damage("unknown file substrate", 28);
  if (compression != OTF2_COMPRESSION_NONE && compression != kCompressionZlib)
    return damage("unknown compression", 29);
  if (!(walk.string() && walk.string() && walk.string()))
    return damage("unterminated machine, creator or description", walk.at());
  if (format >= 2) {
    uint32_t properties = 0;
    const size_t count_at = walk.at();
    // Each property takes at least two bytes (two empty strings).
    if (!walk.value(properties) || properties > walk.left() / 2)
      return damage("invalid property count", count_at);
    for (uint64_t i = 0; i < 2 * uint64_t(properties); ++i)
      if (!walk.string()) return damage("unterminated property", walk.at());
    uint64_t trace_id;
    if (!walk.value(trace_id)) return damage("the file ends before its trace id", walk.at());
  }
  if (format >= 3) {
    uint32_t snapshots, thumbnails;
    if (!(walk.value(snapshots) && walk.value(thumbnails)))
      return damage("the file ends before its snapshot counts", walk.at());
  }
  if (format == kNewestAnchorFormat) {
    uint8_t end = 0;
    if (!walk.value(end) || end != kEndOfFile) return damage("no END_OF_FILE", walk.at());
  }
  return "";
}

std::string find_anchor(const std::string& input) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p(input);
  if (!fs::exists(p, ec)) throw input_error("'" + input + "': no such file or directory");
  if (fs::is_directory(p, ec)) {
    std::vector<fs::path> anchors;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.path().extension() == ".otf2" && e.is_regular_file()) anchors.push_back(e.path());
    if (ec) throw input_error("'" + input + "': cannot list: " + ec.message());
    if (anchors.empty())
      throw input_error("'" + input + "': not an OTF2 archive (no .otf2 anchor file)");
    if (anchors.size() > 1)
      throw input_error("'" + input + "': several .otf2 anchor files; name one");
    return anchors[0].string();
  }
  if (p.extension() != ".otf2")
    throw input_error("'" + input + "': not an OTF2 anchor file (*.otf2)");
  return p.string();
}

} // namespace htrace::format
