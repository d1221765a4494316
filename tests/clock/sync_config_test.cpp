// HTRACE_SYNC parsing: every documented form, the canonical string, and errors that name the
// problem.
#include "clock/sync_config.h"

#include <gtest/gtest.h>

using namespace htrace::clock;

namespace {
SyncConfig parse_ok(const std::string& text) {
  const SyncConfigResult r = parse_sync_config(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error;
  return r.config;
}
std::string parse_error(const std::string& text) {
  const SyncConfigResult r = parse_sync_config(text);
  EXPECT_FALSE(r.ok()) << text << " parsed but should not";
  return r.error;
}
} // namespace

TEST(SyncConfig, DefaultIsH2hcaWithHca3AndClockProp) {
  const SyncConfig c = parse_ok("h2hca");
  EXPECT_EQ(c.algorithm, Algorithm::H2hca);
  ASSERT_TRUE(c.inter && c.intra);
  EXPECT_EQ(c.inter->algorithm, Algorithm::Hca3);
  EXPECT_EQ(c.intra->algorithm, Algorithm::ClockProp);
  EXPECT_TRUE(c.intra->check);
}

TEST(SyncConfig, FlatAlgorithmsAndParameters) {
  for (const char* name : {"none", "jk", "hca", "hca2", "hca3", "clockprop", "h3hca"})
    EXPECT_EQ(algorithm_name(parse_ok(name).algorithm), std::string(name));
  const SyncConfig c = parse_ok(
      "hca3(fitpoints=100, pingpongs=7, offset=meanrtt, recompute=off, slope=fit, window=2.5)");
  EXPECT_EQ(c.pair.fitpoints, 100);
  EXPECT_EQ(c.pair.pingpongs, 7);
  EXPECT_EQ(c.pair.offset, OffsetMethod::MeanRtt);
  EXPECT_FALSE(c.pair.recompute_intercept);
  EXPECT_EQ(c.pair.slope, SlopePolicy::Fit);
  EXPECT_EQ(c.pair.window_ns, 2'500'000);
  EXPECT_EQ(parse_ok("jk:fitpoints=3:pingpongs=4").pair.fitpoints, 3);
  EXPECT_EQ(parse_ok("hca3()").algorithm, Algorithm::Hca3);
}

TEST(SyncConfig, NestedFormsMeanTheSame) {
  const SyncConfig a = parse_ok("h2hca(inter=hca3:fitpoints=20:pingpongs=10,intra=clockprop)");
  const SyncConfig b = parse_ok("h2hca(inter=hca3(fitpoints=20,pingpongs=10),intra=clockprop)");
  EXPECT_EQ(a.inter->pair.fitpoints, 20);
  EXPECT_EQ(a.inter->pair.pingpongs, 10);
  EXPECT_EQ(to_string(a), to_string(b));
  const SyncConfig h3 =
      parse_ok("h3hca(inter=jk, socket=hca2(fitpoints=5), intra=clockprop(check=0))");
  EXPECT_EQ(h3.inter->algorithm, Algorithm::Jk);
  EXPECT_EQ(h3.socket->pair.fitpoints, 5);
  EXPECT_FALSE(h3.intra->check);
  const SyncConfig cp =
      parse_ok("h2hca(intra=clockprop(pingpongs=3,tolerance=50,fallback=jk(fitpoints=4)))");
  EXPECT_EQ(cp.intra->check_pingpongs, 3);
  EXPECT_EQ(cp.intra->tolerance_ns, 50);
  EXPECT_EQ(cp.intra->fallback->algorithm, Algorithm::Jk);
  EXPECT_TRUE(parse_ok("h2hca").nodes_by_hostname);
  EXPECT_FALSE(parse_ok("h2hca(nodes=shared)").nodes_by_hostname);
  EXPECT_NE(parse_error("h2hca(nodes=rack)").find("nodes='rack' is not shared or hostname"),
            std::string::npos);
}

TEST(SyncConfig, CanonicalStringParsesBackToItself) {
  for (const char* text : {"h2hca", "h3hca", "hca3(fitpoints=100)", "jk", "hca:offset=meanrtt",
                           "none", "h2hca(inter=hca2:window=10,intra=hca3)"}) {
    const std::string canonical = to_string(parse_ok(text));
    EXPECT_EQ(to_string(parse_ok(canonical)), canonical) << text;
  }
  EXPECT_EQ(to_string(parse_ok("hca3(fitpoints=100)")),
            "hca3(fitpoints=100,pingpongs=10,offset=skampi,recompute=1,slope=auto,window=0)");
}

TEST(SyncConfig, ErrorsNameTheProblem) {
  EXPECT_NE(parse_error("hca4").find("unknown algorithm 'hca4'"), std::string::npos);
  EXPECT_NE(parse_error("").find("expected an algorithm name"), std::string::npos);
  EXPECT_NE(parse_error("hca3(fitpoint=3)").find("unknown parameter 'fitpoint' for hca3"),
            std::string::npos);
  EXPECT_NE(parse_error("hca3(fitpoints=0)").find("fitpoints='0'"), std::string::npos);
  EXPECT_NE(parse_error("hca3(fitpoints=abc)").find("fitpoints='abc'"), std::string::npos);
  EXPECT_NE(parse_error("hca3(offset=median)").find("skampi or meanrtt"), std::string::npos);
  EXPECT_NE(parse_error("hca3(fitpoints=3").find("expected ',' or ')'"), std::string::npos);
  EXPECT_NE(parse_error("hca3(fitpoints)").find("expected '='"), std::string::npos);
  EXPECT_NE(parse_error("hca3 jk").find("unexpected 'j'"), std::string::npos);
  EXPECT_NE(parse_error("h2hca(inter=h2hca)").find("not allowed inside h2hca"), std::string::npos);
  EXPECT_NE(parse_error("h2hca(socket=hca3)").find("unknown parameter 'socket' for h2hca"),
            std::string::npos);
  EXPECT_NE(parse_error("none(fitpoints=3)").find("no parameters"), std::string::npos);
  EXPECT_NE(parse_error("clockprop(fallback=clockprop)").find("fallback must be"),
            std::string::npos);
  EXPECT_NE(parse_error("hca3(window=-1)").find("window='-1'"), std::string::npos);
  // The error carries the variable name and a 1-based position.
  const std::string e = parse_error("h2hca(inter=hca3:fitpoints=x)");
  EXPECT_NE(e.find("HTRACE_SYNC"), std::string::npos);
  EXPECT_NE(e.find("at position 28"), std::string::npos) << e;
}
