#include "common/options.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

htrace::OptionsResult parse(const std::map<std::string, std::string>& env) {
  return htrace::parse_options([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(Options, DefaultsComeFromTheTable) {
  const auto result = parse({});
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_TRUE(result.options.enable);
  EXPECT_EQ(result.options.buffer_size, 16u << 20);
  EXPECT_EQ(result.options.sync, "h2hca");
  EXPECT_EQ(result.options.archive_dir, ".");
}

TEST(Options, SizesAcceptBinarySuffixes) {
  std::uint64_t v = 0;
  EXPECT_TRUE(htrace::parse_size("64k", v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(htrace::parse_size("2MB", v));
  EXPECT_EQ(v, 2u << 20);
  EXPECT_FALSE(htrace::parse_size("", v));
  EXPECT_FALSE(htrace::parse_size("-1", v));
  EXPECT_FALSE(htrace::parse_size("12x", v));
  EXPECT_FALSE(htrace::parse_size("99999999999999999999", v));
}

TEST(Options, MalformedValueNamesTheVariable) {
  const auto result = parse({{"HTRACE_ENABLE", "maybe"}});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error.find("HTRACE_ENABLE='maybe'"), std::string::npos) << result.error;
}

TEST(Options, BooleansAcceptCommonSpellings) {
  for (const char* yes : {"1", "yes", "ON", "true"}) {
    bool b = false;
    EXPECT_TRUE(htrace::parse_bool(yes, b)) << yes;
    EXPECT_TRUE(b);
  }
  bool b = true;
  EXPECT_TRUE(htrace::parse_bool("off", b));
  EXPECT_FALSE(b);
}

} // namespace
