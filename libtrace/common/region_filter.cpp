#include "common/region_filter.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fnmatch.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace htrace {

bool RegionFilter::excludes(const char* name) const {
  for (auto rule = rules_.rbegin(); rule != rules_.rend(); ++rule)
    if (fnmatch(rule->pattern.c_str(), name, 0) == 0) return rule->exclude;
  return false;
}

/// A token-by-token state machine over the file: which block is open, which rule collects
/// patterns, and whether that rule has any yet.
struct FilterParser {
  enum class Block { None, Regions, Files };

  RegionFilterResult result;
  Block block = Block::None;
  int block_line = 0;
  const char* rule = nullptr; ///< "EXCLUDE" or "INCLUDE" while it collects patterns
  int rule_line = 0;
  bool rule_has_pattern = false;
  bool may_be_mangled = false; ///< right after EXCLUDE/INCLUDE

  bool fail(int line, const std::string& what) {
    result.error = "line " + std::to_string(line) + ": " + what;
    return false;
  }

  bool close_rule() {
    if (rule != nullptr && !rule_has_pattern)
      return fail(rule_line, std::string(rule) + " without a name pattern");
    rule = nullptr;
    return true;
  }

  bool token(const std::string& t, int line) {
    if (t == "SCOREP_REGION_NAMES_BEGIN" || t == "SCOREP_FILE_NAMES_BEGIN") {
      if (block != Block::None) return fail(line, t + " inside another block");
      block = t == "SCOREP_REGION_NAMES_BEGIN" ? Block::Regions : Block::Files;
      block_line = line;
      return true;
    }
    if (t == "SCOREP_REGION_NAMES_END" || t == "SCOREP_FILE_NAMES_END") {
      const Block closes = t == "SCOREP_REGION_NAMES_END" ? Block::Regions : Block::Files;
      if (block != closes) return fail(line, t + " without " + t.substr(0, t.size() - 3) + "BEGIN");
      block = Block::None;
      return close_rule();
    }
    if (block == Block::None)
      return fail(line, "'" + t + "' outside a SCOREP_REGION_NAMES or SCOREP_FILE_NAMES block");
    if (t == "EXCLUDE" || t == "INCLUDE") {
      if (!close_rule()) return false;
      rule = t == "EXCLUDE" ? "EXCLUDE" : "INCLUDE";
      rule_line = line;
      rule_has_pattern = false;
      may_be_mangled = true;
      return true;
    }
    if (t == "MANGLED") {
      if (!may_be_mangled) return fail(line, "MANGLED not right after EXCLUDE or INCLUDE");
      may_be_mangled = false;
      return true;
    }
    if (rule == nullptr) return fail(line, "pattern '" + t + "' before EXCLUDE or INCLUDE");
    rule_has_pattern = true;
    may_be_mangled = false;
    if (block == Block::Files)
      ++result.filter.file_rules_;
    else
      result.filter.rules_.push_back({rule[0] == 'E', t});
    return true;
  }

  bool finish() {
    if (block == Block::None) return true;
    const char* begin =
        block == Block::Regions ? "SCOREP_REGION_NAMES_BEGIN" : "SCOREP_FILE_NAMES_BEGIN";
    return fail(block_line, std::string(begin) + " without its END");
  }
};

RegionFilterResult parse_region_filter(const std::string& text) {
  FilterParser parser;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::istringstream tokens(line.substr(0, line.find('#')));
    std::string t;
    while (tokens >> t)
      if (!parser.token(t, number)) return parser.result;
  }
  parser.finish();
  return parser.result;
}

RegionFilterResult read_region_filter(const std::string& path) {
  RegionFilterResult failed;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    failed.error = std::string("cannot be read: ") + std::strerror(errno);
    return failed;
  }
  std::string text;
  struct stat st {};
  int error = fstat(fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EISDIR : 0;
  char chunk[4096];
  while (error == 0) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0)
      text.append(chunk, static_cast<std::size_t>(n));
    else if (n == 0)
      break;
    else if (errno != EINTR)
      error = errno;
  }
  ::close(fd);
  if (error != 0) {
    failed.error = std::string("cannot be read: ") +
                   (error == EISDIR ? "not a regular file" : std::strerror(error));
    return failed;
  }
  return parse_region_filter(text);
}

} // namespace htrace
