#include "record/snapshot.h"

#include "common/host_name.h"
#include "common/log.h"
#include "record/location_writer.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <otf2/otf2.h>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace::record::snapshot {
namespace {

constexpr char kMagic[] = "htrace-salvage-3\n";
// Version 2 lacked the windows and MPI-IO definitions (read as none).
constexpr char kMagicWithoutRmaIo[] = "htrace-salvage-2\n";

std::string dir_of(const State& s) {
  return s.archive_path + "/" + kDirName;
}
std::string file_of(const State& s, const char* suffix) {
  return dir_of(s) + "/" + std::to_string(s.rank) + suffix;
}

// The end file stays open from start to the end of the run, so that marking it is one pwrite.
std::atomic<int> g_end_fd{-1};
std::atomic<bool> g_end_marked{false};
std::string g_last_written; ///< guarded by state().mutex

void write_end_text(int fd, const char* text) {
  char block[kEndSize];
  std::memset(block, ' ', sizeof block);
  std::size_t n = std::strlen(text);
  if (n > kEndSize - 1) n = kEndSize - 1;
  std::memcpy(block, text, n);
  block[kEndSize - 1] = '\n';
  (void)!::pwrite(fd, block, sizeof block, 0);
}

/// Temporary file + rename: a reader (or a kill) never sees half a snapshot. POSIX calls only:
/// the preloaded library keeps clear of iostreams. No fsync: a crash of the process, not of the
/// node, is what this guards against.
bool write_atomically(const std::string& path, const std::string& bytes, std::string& error) {
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  const int write_errno = done == bytes.size() ? 0 : (errno ? errno : ENOSPC);
  if (::close(fd) != 0 || write_errno != 0 || ::rename(temporary.c_str(), path.c_str()) != 0) {
    error = std::strerror(write_errno ? write_errno : errno);
    ::unlink(temporary.c_str());
    return false;
  }
  return true;
}

void append_u64(std::string& out, std::uint64_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void append_str(std::string& out, const std::string& s) {
  append_u64(out, s.size());
  out += s;
}

struct Cursor {
  const std::string& in;
  std::size_t pos = 0;
  bool ok = true;
  std::uint64_t u64() {
    std::uint64_t v = 0;
    if (pos + sizeof v > in.size()) {
      ok = false;
      return 0;
    }
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    return v;
  }
  std::string str() {
    const std::uint64_t n = u64();
    if (!ok || n > in.size() - pos) {
      ok = false;
      return {};
    }
    std::string s = in.substr(pos, n);
    pos += n;
    return s;
  }
};

RankSnapshot take(State& s) {
  RankSnapshot snap;
  snap.world_size = s.size;
  snap.start_realtime_ns = s.start_realtime_ns;
  snap.start_global_ns = s.current_map().to_global(s.start_base_ns);
  std::uint64_t def_chunk = 0;
  if (s.archive)
    OTF2_Archive_GetChunkSize(reinterpret_cast<OTF2_Archive*>(s.archive), &snap.event_chunk_size,
                              &def_chunk);
  snap.defs.rank = s.rank;
  snap.defs.host = host_name();
  for (const auto& loc : s.locations)
    snap.defs.locations.push_back({loc->id(), 0, INT64_MAX, INT64_MIN});
  snap.defs.regions = s.regions;
  snap.defs.comms = s.comms;
  snap.defs.process_properties = s.process_properties;
  if (s.rank == 0) snap.archive_properties = s.archive_properties;
  snap.rma_io = to_part(s.rma_io, {}); // an empty map keeps the local communicator ids
  return snap;
}

} // namespace

std::string encode(const RankSnapshot& snap) {
  std::string out = kMagic;
  append_u64(out, static_cast<std::uint64_t>(snap.world_size));
  append_u64(out, static_cast<std::uint64_t>(snap.start_realtime_ns));
  append_u64(out, static_cast<std::uint64_t>(snap.start_global_ns));
  append_u64(out, snap.event_chunk_size);
  append_str(out, serialize(snap.defs));
  append_u64(out, snap.archive_properties.size());
  for (const auto& p : snap.archive_properties) {
    append_str(out, p.first);
    append_str(out, p.second);
  }
  append_str(out, serialize(snap.rma_io));
  return out;
}

bool decode(const std::string& bytes, RankSnapshot& snap, std::string& error) {
  const std::size_t magic = sizeof kMagic - 1;
  static_assert(sizeof kMagic == sizeof kMagicWithoutRmaIo, "one magic length");
  const bool with_rma_io = bytes.compare(0, magic, kMagic) == 0;
  if (!with_rma_io && bytes.compare(0, magic, kMagicWithoutRmaIo) != 0) {
    error = "not an htrace salvage file";
    return false;
  }
  Cursor c{bytes, magic};
  snap.world_size = static_cast<int>(c.u64());
  snap.start_realtime_ns = static_cast<std::int64_t>(c.u64());
  snap.start_global_ns = static_cast<std::int64_t>(c.u64());
  snap.event_chunk_size = c.u64();
  const std::string defs = c.str();
  const std::uint64_t props = c.u64();
  for (std::uint64_t i = 0; c.ok && i < props; ++i) {
    std::string name = c.str();
    std::string value = c.str();
    snap.archive_properties.emplace_back(std::move(name), std::move(value));
  }
  const std::string rma_io = with_rma_io ? c.str() : std::string();
  if (!c.ok || c.pos != bytes.size() || !deserialize(defs, snap.defs) ||
      (with_rma_io && !deserialize(rma_io, snap.rma_io))) {
    error = "truncated or corrupt";
    return false;
  }
  // OTF2 accepts event chunks of 256 KiB to 16 MiB.
  if (snap.event_chunk_size < (256u << 10) || snap.event_chunk_size > (16u << 20)) {
    error = "event chunk size " + std::to_string(snap.event_chunk_size) + " out of range";
    return false;
  }
  if (snap.world_size <= 0 || snap.defs.rank < 0 || snap.defs.rank >= snap.world_size) {
    error = "rank " + std::to_string(snap.defs.rank) + " of " + std::to_string(snap.world_size) +
            " is not a rank";
    return false;
  }
  return true;
}

void refresh_locked(State& s) {
  if (s.archive_path.empty() || g_end_fd.load() < 0) return;
  std::string bytes = encode(take(s));
  if (bytes == g_last_written) return;
  std::string error;
  if (write_atomically(file_of(s, ".defs"), bytes, error))
    g_last_written = std::move(bytes);
  else
    log::debug("salvage definitions not updated: %s", error.c_str()); // e.g. the disk is full
}

void refresh_from_flush() {
  State& s = state();
  // finalize() and emergency_flush() stop recording before they take the registry and refresh
  // the snapshot themselves; only application threads flushing while recording get here.
  if (s.phase.load() != Phase::Recording) return;
  std::unique_lock<std::mutex> lock(s.mutex, std::try_to_lock);
  if (lock.owns_lock()) refresh_locked(s);
}

void write_initial() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.archive_path.empty() || g_end_fd.load() >= 0) return;
  const std::string dir = dir_of(s);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    log::debug("cannot create '%s': %s", dir.c_str(), std::strerror(errno));
    return;
  }
  const int fd = ::open(file_of(s, ".end").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    log::debug("cannot create the salvage end file: %s", std::strerror(errno));
    return;
  }
  write_end_text(fd, kRunning);
  g_end_fd = fd;
  refresh_locked(s);
}

void mark_end(const char* cause) {
  const int fd = g_end_fd.load();
  if (fd < 0) return;
  const bool finished = std::strcmp(cause, kFinished) == 0;
  if (finished ? g_end_marked.load() : g_end_marked.exchange(true)) return;
  write_end_text(fd, cause);
}

void remove_files(const State& s) {
  const int fd = g_end_fd.exchange(-1);
  if (fd < 0) return;
  ::close(fd);
  ::unlink(file_of(s, ".end").c_str());
  ::unlink(file_of(s, ".defs").c_str());
}

void remove_directory(const State& s) {
  if (!s.archive_path.empty()) ::rmdir(dir_of(s).c_str());
}

} // namespace htrace::record::snapshot
