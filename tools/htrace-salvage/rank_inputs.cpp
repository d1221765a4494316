#include "rank_inputs.h"

#include "format/error.h"

#include <fstream>
#include <map>
#include <sstream>

namespace fs = std::filesystem;

namespace htrace::salvage {
namespace {

namespace snapshot = record::snapshot;

std::string read_file(const fs::path& p, bool& ok) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  ok = static_cast<bool>(in) || in.eof();
  return text.str();
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\0'))
    s.pop_back();
  return s;
}

} // namespace

std::vector<RankInput> load_ranks(const fs::path& dir) {
  std::error_code ec;
  std::map<int, RankInput> by_rank;
  int world_size = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".defs") continue;
    bool ok = false;
    const std::string bytes = read_file(e.path(), ok);
    RankInput in;
    std::string error;
    if (!ok || !snapshot::decode(bytes, in.snap, error))
      throw input_error("'" + e.path().string() + "': " + (ok ? error : "cannot read"));
    if (world_size && in.snap.world_size != world_size)
      throw input_error("'" + e.path().string() + "': from a run of " +
                        std::to_string(in.snap.world_size) + " ranks, the others of " +
                        std::to_string(world_size));
    world_size = in.snap.world_size;
    in.found = true;
    const int rank = in.snap.defs.rank;
    if (e.path().stem() != std::to_string(rank))
      throw input_error("'" + e.path().string() + "': holds rank " + std::to_string(rank));
    by_rank[rank] = std::move(in);
  }
  if (ec) throw input_error("'" + dir.string() + "': cannot list: " + ec.message());
  if (by_rank.empty()) throw input_error("'" + dir.string() + "': no salvage files (*.defs)");
  std::vector<RankInput> ranks(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    RankInput& in = ranks[r];
    auto it = by_rank.find(r);
    if (it != by_rank.end()) in = std::move(it->second);
    in.snap.defs.rank = r;
    if (!in.found) in.snap.defs.host = "unknown";
    bool ok = false;
    const std::string end = trim(read_file(dir / (std::to_string(r) + ".end"), ok));
    if (!in.found)
      in.end = "no salvage files (ended before tracing started)";
    else if (!ok || end.empty() || end == snapshot::kRunning)
      in.end = "killed (no end recorded)"; // SIGKILL, or a node that went away
    else
      in.end = end;
    in.finished = in.found && end == snapshot::kFinished;
  }
  return ranks;
}

} // namespace htrace::salvage
