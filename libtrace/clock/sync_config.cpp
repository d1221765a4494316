#include "clock/sync_config.h"

#include "common/options.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace htrace::clock {
namespace {

struct NamedAlgorithm {
  const char* name;
  Algorithm algorithm;
};
constexpr NamedAlgorithm kAlgorithms[] = {
    {"none", Algorithm::None},   {"jk", Algorithm::Jk},       {"hca", Algorithm::Hca},
    {"hca2", Algorithm::Hca2},   {"hca3", Algorithm::Hca3},   {"clockprop", Algorithm::ClockProp},
    {"h2hca", Algorithm::H2hca}, {"h3hca", Algorithm::H3hca},
};

std::shared_ptr<SyncConfig> make(Algorithm a);

/// Defaults per algorithm. The pairwise defaults favour accuracy (htrace-clockcheck); the
/// hierarchical default is tuned for a short MPI_Init (see bench/clocksync).
SyncConfig defaults(Algorithm a) {
  SyncConfig c;
  c.algorithm = a;
  switch (a) {
  case Algorithm::ClockProp:
    c.fallback = make(Algorithm::Hca3);
    break;
  case Algorithm::H2hca:
    c.inter = make(Algorithm::Hca3);
    c.inter->pair.fitpoints = 8;
    c.inter->pair.pingpongs = 10;
    c.intra = make(Algorithm::ClockProp);
    break;
  case Algorithm::H3hca:
    c.inter = make(Algorithm::Hca3);
    c.inter->pair.fitpoints = 8;
    c.socket = make(Algorithm::Hca3);
    c.socket->pair.fitpoints = 8;
    c.intra = make(Algorithm::ClockProp);
    break;
  default:
    break;
  }
  return c;
}

std::shared_ptr<SyncConfig> make(Algorithm a) {
  return std::make_shared<SyncConfig>(defaults(a));
}

class Parser {
public:
  explicit Parser(const std::string& text) : s_(text) {}

  bool parse(SyncConfig& out) {
    if (!spec(out)) return false;
    skip_ws();
    if (pos_ != s_.size()) return fail("unexpected '" + s_.substr(pos_, 1) + "'");
    return true;
  }
  std::string error;

private:
  const std::string& s_;
  std::size_t pos_ = 0;

  bool fail(const std::string& what) {
    if (error.empty()) error = "at position " + std::to_string(pos_ + 1) + ": " + what;
    return false;
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }
  bool accept(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::string word() {
    skip_ws();
    const std::size_t start = pos_;
    while (pos_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' ||
            s_[pos_] == '.' || s_[pos_] == '-' || s_[pos_] == '+'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }

  bool spec(SyncConfig& out) {
    const std::size_t at = pos_;
    const std::string name = word();
    if (name.empty())
      return fail(
          "expected an algorithm name (none, jk, hca, hca2, hca3, clockprop, h2hca, h3hca)");
    bool found = false;
    for (const auto& a : kAlgorithms)
      if (name == a.name) {
        out = defaults(a.algorithm);
        found = true;
      }
    if (!found) {
      pos_ = at;
      skip_ws();
      return fail("unknown algorithm '" + name +
                  "' (expected none, jk, hca, hca2, hca3, clockprop, h2hca or h3hca)");
    }
    if (accept('(')) {
      if (!accept(')')) {
        do {
          if (!param(out)) return false;
        } while (accept(','));
        if (!accept(')')) return fail("expected ',' or ')' after a parameter of " + name);
      }
    }
    while (accept(':'))
      if (!param(out)) return false;
    return true;
  }

  bool param(SyncConfig& c) {
    const std::size_t at = pos_;
    const std::string key = word();
    if (key.empty()) return fail("expected a parameter name");
    if (!accept('=')) return fail("expected '=' after '" + key + "'");
    const char* alg = algorithm_name(c.algorithm);
    auto nested = [&](std::shared_ptr<SyncConfig>& slot, bool hierarchical_ok) {
      auto child = std::make_shared<SyncConfig>();
      const std::size_t child_at = pos_;
      if (!spec(*child)) return false;
      if (!hierarchical_ok &&
          (child->algorithm == Algorithm::H2hca || child->algorithm == Algorithm::H3hca ||
           child->algorithm == Algorithm::None)) {
        pos_ = child_at;
        skip_ws();
        return fail(key + "=" + algorithm_name(child->algorithm) + " is not allowed inside " + alg +
                    " (use jk, hca, hca2, hca3 or clockprop)");
      }
      slot = child;
      return true;
    };
    const bool pairwise = is_pairwise(c.algorithm);
    const bool hier = c.algorithm == Algorithm::H2hca || c.algorithm == Algorithm::H3hca;
    if (hier && (key == "inter" || key == "intra" ||
                 (key == "socket" && c.algorithm == Algorithm::H3hca))) {
      return nested(key == "inter" ? c.inter : key == "intra" ? c.intra : c.socket, false);
    }
    if (c.algorithm == Algorithm::ClockProp && key == "fallback") {
      if (!nested(c.fallback, false)) return false;
      if (!is_pairwise(c.fallback->algorithm)) {
        pos_ = at;
        return fail("fallback must be jk, hca, hca2 or hca3");
      }
      return true;
    }
    const std::size_t value_at = pos_;
    if (hier && key == "nodes") {
      const std::string v = word();
      if (v == "shared")
        c.nodes_by_hostname = false;
      else if (v == "hostname")
        c.nodes_by_hostname = true;
      else {
        pos_ = value_at;
        skip_ws();
        return fail(std::string(alg) + ": nodes='" + v + "' is not shared or hostname");
      }
      return true;
    }
    const std::string value = word();
    auto bad = [&](const std::string& expected) {
      pos_ = value_at;
      skip_ws();
      return fail(std::string(alg) + ": " + key + "='" + value + "' is not " + expected);
    };
    long n = 0;
    bool b = false;
    if (pairwise && key == "fitpoints") {
      if (!parse_int(value, n) || n < 1 || n > 100000) return bad("an integer in 1..100000");
      c.pair.fitpoints = static_cast<int>(n);
    } else if ((pairwise || c.algorithm == Algorithm::ClockProp) && key == "pingpongs") {
      if (!parse_int(value, n) || n < 1 || n > 100000) return bad("an integer in 1..100000");
      (pairwise ? c.pair.pingpongs : c.check_pingpongs) = static_cast<int>(n);
    } else if (pairwise && key == "offset") {
      if (value == "skampi")
        c.pair.offset = OffsetMethod::Skampi;
      else if (value == "meanrtt")
        c.pair.offset = OffsetMethod::MeanRtt;
      else
        return bad("skampi or meanrtt");
    } else if (pairwise && key == "recompute") {
      if (!parse_bool(value, b)) return bad("a boolean (0/1/yes/no/on/off/true/false)");
      c.pair.recompute_intercept = b;
    } else if (pairwise && key == "slope") {
      if (value == "auto")
        c.pair.slope = SlopePolicy::Auto;
      else if (value == "fit")
        c.pair.slope = SlopePolicy::Fit;
      else if (value == "off")
        c.pair.slope = SlopePolicy::Off;
      else
        return bad("auto, fit or off");
    } else if (pairwise && key == "window") {
      char* end = nullptr;
      const double ms = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(ms >= 0) || ms > 600000)
        return bad("a time in ms in 0..600000");
      c.pair.window_ns = std::llround(ms * 1e6);
    } else if (c.algorithm == Algorithm::ClockProp && key == "check") {
      if (!parse_bool(value, b)) return bad("a boolean (0/1/yes/no/on/off/true/false)");
      c.check = b;
    } else if (c.algorithm == Algorithm::ClockProp && key == "tolerance") {
      if (!parse_int(value, n) || n < 0) return bad("a non-negative number of ns");
      c.tolerance_ns = n;
    } else if (c.algorithm == Algorithm::ClockProp && key == "resolution") {
      if (!parse_int(value, n) || n < 1) return bad("a positive number of ns");
      c.resolution_ns = n;
    } else {
      pos_ = at;
      skip_ws();
      const char* expected = pairwise ? "fitpoints, pingpongs, offset, recompute, slope, window"
                             : c.algorithm == Algorithm::ClockProp
                                 ? "check, pingpongs, tolerance, resolution, fallback"
                             : c.algorithm == Algorithm::H2hca ? "inter, intra, nodes"
                             : c.algorithm == Algorithm::H3hca ? "inter, socket, intra, nodes"
                                                               : "no parameters";
      return fail("unknown parameter '" + key + "' for " + alg + " (expected " + expected + ")");
    }
    return true;
  }
};

std::string format_ms(std::int64_t ns) {
  std::ostringstream out;
  out << static_cast<double>(ns) / 1e6;
  return out.str();
}

} // namespace

const char* algorithm_name(Algorithm algorithm) {
  for (const auto& a : kAlgorithms)
    if (a.algorithm == algorithm) return a.name;
  return "?";
}

bool is_pairwise(Algorithm a) {
  return a == Algorithm::Jk || a == Algorithm::Hca || a == Algorithm::Hca2 || a == Algorithm::Hca3;
}

SyncConfigResult parse_sync_config(const std::string& text) {
  SyncConfigResult r;
  Parser p(text);
  if (!p.parse(r.config)) r.error = "HTRACE_SYNC '" + text + "': " + p.error;
  return r;
}

std::string to_string(const SyncConfig& c) {
  std::ostringstream out;
  out << algorithm_name(c.algorithm);
  if (is_pairwise(c.algorithm)) {
    const auto& p = c.pair;
    out << "(fitpoints=" << p.fitpoints << ",pingpongs=" << p.pingpongs
        << ",offset=" << (p.offset == OffsetMethod::Skampi ? "skampi" : "meanrtt")
        << ",recompute=" << (p.recompute_intercept ? 1 : 0) << ",slope="
        << (p.slope == SlopePolicy::Auto  ? "auto"
            : p.slope == SlopePolicy::Fit ? "fit"
                                          : "off")
        << ",window=" << format_ms(p.window_ns) << ")";
  } else if (c.algorithm == Algorithm::ClockProp) {
    out << "(check=" << (c.check ? 1 : 0) << ",pingpongs=" << c.check_pingpongs
        << ",tolerance=" << c.tolerance_ns << ",resolution=" << c.resolution_ns
        << ",fallback=" << to_string(*c.fallback) << ")";
  } else if (c.algorithm == Algorithm::H2hca) {
    out << "(inter=" << to_string(*c.inter) << ",intra=" << to_string(*c.intra)
        << ",nodes=" << (c.nodes_by_hostname ? "hostname" : "shared") << ")";
  } else if (c.algorithm == Algorithm::H3hca) {
    out << "(inter=" << to_string(*c.inter) << ",socket=" << to_string(*c.socket)
        << ",intra=" << to_string(*c.intra)
        << ",nodes=" << (c.nodes_by_hostname ? "hostname" : "shared") << ")";
  }
  return out.str();
}

} // namespace htrace::clock
