#include "common/options.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

// An injected environment: the values, and every name as `environ` would list it.
htrace::OptionsResult parse(const std::map<std::string, std::string>& env) {
  htrace::Environment e;
  e.get = [&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  for (const auto& [name, value] : env)
    e.names.push_back(name);
  return htrace::parse_options(e);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Options, DefaultsComeFromTheTable) {
  const auto result = parse({});
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_TRUE(result.options.enable);
  EXPECT_EQ(result.options.buffer_size, 64u << 10);
  EXPECT_EQ(result.options.sync, "h2hca");
  EXPECT_EQ(result.options.archive_dir, ".");
  EXPECT_EQ(result.options.verbose, 1);
  EXPECT_EQ(result.options.harmonize_grow_percent, 150);
}

// Every default of the table must itself be a good value, or every run would be a bad one.
TEST(Options, EveryDefaultParses) {
  for (const htrace::OptionSpec& spec : htrace::option_specs()) {
    const auto result = parse({{spec.env_name, spec.default_value}});
    EXPECT_TRUE(result.ok()) << spec.env_name << ": " << result.error;
  }
}

TEST(Options, EveryKindReachesItsField) {
  const auto result = parse({{"HTRACE_ENABLE", "off"},
                             {"HTRACE_BUFFER_SIZE", "2M"},
                             {"HTRACE_VERBOSE", "2"},
                             {"HTRACE_SYNC", "hca3(fitpoints=5)"},
                             {"HTRACE_HARMONIZE_SPIN_US", "0"}});
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_FALSE(result.options.enable);
  EXPECT_EQ(result.options.buffer_size, 2u << 20);
  EXPECT_EQ(result.options.verbose, 2);
  EXPECT_EQ(result.options.sync, "hca3(fitpoints=5)");
  EXPECT_EQ(result.options.harmonize_spin_us, 0);
}

// HTRACE_BUDGET: no limit by default, sizes with suffixes, and a bad one like any bad value.
TEST(Options, BudgetIsASizeWithNoLimitByDefault) {
  EXPECT_EQ(parse({}).options.budget, 0u);
  EXPECT_EQ(parse({{"HTRACE_BUDGET", "256M"}}).options.budget, 256u << 20);
  const auto result = parse({{"HTRACE_BUDGET", "abc"}});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error, "HTRACE_BUDGET='abc' is not a byte count such as 4096, 64k, 16M or 1G");
  EXPECT_FALSE(result.options.enable);
  EXPECT_EQ(result.options.budget, 0u);
}

TEST(Options, SizesAcceptBinarySuffixes) {
  std::uint64_t v = 0;
  EXPECT_TRUE(htrace::parse_size("64k", v));
  EXPECT_EQ(v, 65536u);
  EXPECT_TRUE(htrace::parse_size("2MB", v));
  EXPECT_EQ(v, 2u << 20);
  EXPECT_TRUE(htrace::parse_size("1g", v));
  EXPECT_EQ(v, 1u << 30);
  EXPECT_TRUE(htrace::parse_size("3T", v));
  EXPECT_EQ(v, 3ull << 40);
  EXPECT_FALSE(htrace::parse_size("", v));
  EXPECT_FALSE(htrace::parse_size("-1", v));
  EXPECT_FALSE(htrace::parse_size("12x", v));
  EXPECT_FALSE(htrace::parse_size("99999999999999999999", v));
  EXPECT_FALSE(htrace::parse_size("17179869184G", v)); // overflows 64 bits once scaled
}

TEST(Options, IntegersMustBeWholeAndDecimal) {
  long v = 0;
  EXPECT_TRUE(htrace::parse_int("-3", v));
  EXPECT_EQ(v, -3);
  EXPECT_FALSE(htrace::parse_int("", v));
  EXPECT_FALSE(htrace::parse_int("1.5", v));
  EXPECT_FALSE(htrace::parse_int("7 ", v));
  EXPECT_FALSE(htrace::parse_int("99999999999999999999", v));
}

TEST(Options, BooleansAcceptCommonSpellings) {
  for (const char* yes : {"1", "yes", "ON", "true"}) {
    bool b = false;
    EXPECT_TRUE(htrace::parse_bool(yes, b)) << yes;
    EXPECT_TRUE(b);
  }
  for (const char* no : {"0", "No", "off", "FALSE"}) {
    bool b = true;
    EXPECT_TRUE(htrace::parse_bool(no, b)) << no;
    EXPECT_FALSE(b);
  }
  bool b = false;
  EXPECT_FALSE(htrace::parse_bool("maybe", b));
  EXPECT_FALSE(htrace::parse_bool("", b));
}

// One line names the variable, the value and the accepted form, for every kind.
TEST(Options, BadValueNamesVariableValueAndForm) {
  const std::map<std::string, std::string> cases = {
      {"HTRACE_ENABLE", "0/1, yes/no, on/off or true/false"},
      {"HTRACE_BUFFER_SIZE", "a byte count such as 4096, 64k, 16M or 1G"},
      {"HTRACE_VERBOSE", "an integer in 0..2"}};
  for (const auto& [name, form] : cases) {
    const auto result = parse({{name, "bogus"}});
    ASSERT_FALSE(result.ok()) << name;
    EXPECT_EQ(result.error, name + "='bogus' is not " + form);
  }
}

TEST(Options, IntegersOutsideTheTableRangeAreBadValues) {
  EXPECT_FALSE(parse({{"HTRACE_VERBOSE", "3"}}).ok());
  EXPECT_FALSE(parse({{"HTRACE_VERBOSE", "-1"}}).ok());
  EXPECT_TRUE(parse({{"HTRACE_VERBOSE", "0"}}).ok());
  EXPECT_FALSE(parse({{"HTRACE_HARMONIZE_EXPIRY_MS", "0"}}).ok());
  EXPECT_FALSE(parse({{"HTRACE_HARMONIZE_GROW_PERCENT", "100"}}).ok()); // must grow
  EXPECT_FALSE(parse({{"HTRACE_HARMONIZE_SHRINK_PERCENT", "101"}}).ok());
  const auto result = parse({{"HTRACE_HARMONIZE_SPIN_US", "-5"}});
  EXPECT_EQ(result.error, "HTRACE_HARMONIZE_SPIN_US='-5' is not an integer in 0..1000000");
}

// The policy: a bad value anywhere gives the defaults with tracing off, never a mix.
TEST(Options, BadValueTurnsTracingOffAndKeepsDefaults) {
  const auto result = parse({{"HTRACE_BUFFER_SIZE", "64k"},
                             {"HTRACE_HARMONIZE_SPIN_US", "7"},
                             {"HTRACE_OMPT", "perhaps"}});
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(result.options.enable);
  EXPECT_EQ(result.options.buffer_size, 64u << 10);
  EXPECT_EQ(result.options.harmonize_spin_us, 200);
  EXPECT_TRUE(result.options.ompt);
}

// The file named for the run's diagnostics is where the bad value gets reported.
TEST(Options, BadValueKeepsTheLogFile) {
  const auto result = parse({{"HTRACE_LOG_FILE", "/tmp/run.log"}, {"HTRACE_VERBOSE", "9"}});
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(result.options.enable);
  EXPECT_EQ(result.options.verbose, 1);
  EXPECT_EQ(result.options.log_file, "/tmp/run.log");
}

TEST(Options, FirstBadValueIsReported) {
  const auto result = parse({{"HTRACE_ENABLE", "x"}, {"HTRACE_VERBOSE", "y"}});
  EXPECT_TRUE(contains(result.error, "HTRACE_ENABLE='x'")) << result.error;
}

TEST(Options, UnknownVariableWarnsWithTheClosestName) {
  const auto result = parse({{"HTRACE_BUFER_SIZE", "1M"}, {"HTRACE_SYNK", "none"}});
  EXPECT_TRUE(result.ok()) << result.error;
  ASSERT_EQ(result.warnings.size(), 2u);
  EXPECT_EQ(result.warnings[0],
            "HTRACE_BUFER_SIZE: unknown option; did you mean HTRACE_BUFFER_SIZE?");
  EXPECT_EQ(result.warnings[1], "HTRACE_SYNK: unknown option; did you mean HTRACE_SYNC?");
  EXPECT_EQ(result.options.buffer_size, 64u << 10); // the misspelt value is not used
}

TEST(Options, ClosestNameCoversTestVariables) {
  EXPECT_EQ(htrace::closest_known_variable("HTRACE_CLUSTER_OFSETS"), "HTRACE_CLUSTER_OFFSETS");
  EXPECT_EQ(htrace::closest_known_variable("HTRACE_HARMONIZE_EXPIRY"),
            "HTRACE_HARMONIZE_EXPIRY_MS");
}

TEST(Options, KnownAndForeignVariablesDoNotWarn) {
  std::map<std::string, std::string> env = {{"PATH", "/bin"}, {"HTRACEX", "1"}};
  for (const char* name : htrace::non_library_variables())
    env[name] = "1";
  for (const htrace::OptionSpec& spec : htrace::option_specs())
    env[spec.env_name] = spec.default_value;
  const auto result = parse(env);
  EXPECT_TRUE(result.ok()) << result.error;
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
}

TEST(Options, ProcessEnvironmentListsTheNamesSet) {
  ::setenv("HTRACE_TEST_ONLY_NAME", "1", 1);
  const htrace::Environment env = htrace::process_environment();
  ::unsetenv("HTRACE_TEST_ONLY_NAME");
  EXPECT_NE(std::find(env.names.begin(), env.names.end(), "HTRACE_TEST_ONLY_NAME"),
            env.names.end());
}

TEST(Options, KindLabelShowsTheRange) {
  for (const htrace::OptionSpec& spec : htrace::option_specs()) {
    if (std::string(spec.env_name) == "HTRACE_VERBOSE") {
      EXPECT_EQ(spec.kind_label(), "Int 0..2");
    }
    if (std::string(spec.env_name) == "HTRACE_ENABLE") {
      EXPECT_EQ(spec.kind_label(), "Bool");
    }
  }
}

// Parsed once: every caller, on any thread, gets the one object, and a later change of the
// environment reaches no consumer (what MPI_Init, the recorder, OMPT and MPIX_Harmonize rely on).
TEST(Options, RunOptionsAreParsedOnce) {
  ::setenv("HTRACE_BUFFER_SIZE", "64k", 1);
  std::vector<const htrace::OptionsResult*> seen(8, nullptr);
  {
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i)
      threads.emplace_back([&seen, i] { seen[i] = &htrace::run_options(); });
    for (std::thread& t : threads)
      t.join();
  }
  EXPECT_EQ(std::set<const htrace::OptionsResult*>(seen.begin(), seen.end()).size(), 1u);
  EXPECT_EQ(seen[0]->options.buffer_size, 64u << 10);
  ::setenv("HTRACE_BUFFER_SIZE", "1M", 1);
  EXPECT_EQ(&htrace::run_options(), seen[0]);
  EXPECT_EQ(htrace::run_options().options.buffer_size, 64u << 10);
  ::unsetenv("HTRACE_BUFFER_SIZE");
}

} // namespace

// A filter file is part of the options: unreadable or malformed is a bad value (tracing off,
// the line named), well-formed gives its rules.
TEST(Options, FilterFileIsReadWithTheOptions) {
  char path[] = "/tmp/htrace-options-filter-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string good =
      "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Test*\nSCOREP_REGION_NAMES_END\n";
  ASSERT_EQ(write(fd, good.data(), good.size()), static_cast<ssize_t>(good.size()));
  close(fd);
  auto result = parse({{"HTRACE_FILTER_FILE", path}});
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_TRUE(result.mpi_filter.excludes("MPI_Testany"));
  EXPECT_FALSE(result.mpi_filter.excludes("MPI_Send"));

  std::ofstream(path) << "SCOREP_REGION_NAMES_BEGIN\n  EXCLUDE MPI_Test*\n  MPI_X\n";
  result = parse({{"HTRACE_FILTER_FILE", path}, {"HTRACE_LOG_FILE", "/tmp/x.log"}});
  std::remove(path);
  EXPECT_EQ(result.error, std::string("HTRACE_FILTER_FILE='") + path +
                              "': line 1: SCOREP_REGION_NAMES_BEGIN without its END");
  EXPECT_FALSE(result.options.enable);
  EXPECT_EQ(result.options.log_file, "/tmp/x.log");
  EXPECT_TRUE(result.mpi_filter.rules().empty());

  result = parse({{"HTRACE_FILTER_FILE", "/nonexistent/f"}});
  EXPECT_EQ(result.error,
            "HTRACE_FILTER_FILE='/nonexistent/f': cannot be read: No such file or directory");
}
