// Every sweep in configs/sweeps loads against the real built-in plugins
// (their schemas, ranges and choices) and expands to at least one point per
// (fusion, sizes, scheduler).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/spec/spec.h"
#include "schedlab/sweep/search/strategy.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

const std::string kSweepDir = SCHEDLAB_SOURCE_DIR "/configs/sweeps";

/// The options `schedlab run` uses (bench/cmd_run.cpp).
LoadOptions cli_options(plugin::Registry& registry) {
  LoadOptions o;
  o.fusion_dirs = {test_support::config_fusion_dir()};
  o.schedule_dirs = {std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules"};
  o.plugins = registry_lookup(registry);
  return o;
}

std::vector<std::string> sweep_files() {
  return test_support::files_with_extension(kSweepDir, ".yaml");
}

class ConfigSweep : public testing::TestWithParam<std::string> {};

TEST_P(ConfigSweep, LoadsAgainstTheBuiltinPlugins) {
  plugin::Registry registry(plugin::plugin_search_path());
  LoadOptions options = cli_options(registry);
  SweepSpec spec;
  try {
    spec = load_sweep_file(GetParam(), options);
  } catch (const UserError& e) {
    FAIL() << e.what();
  }
  std::vector<Point> points = expand(spec);
  std::set<std::tuple<size_t, size_t, size_t>> covered;
  for (const Point& p : points) covered.insert({p.fusion, p.sizes, p.scheduler});
  size_t searches = 0;
  for (const FusionSpec& f : spec.fusions)
    for (const SchedulerSpec& s : spec.schedulers) searches += s.applies_to(f.name) * f.sizes.size();
  EXPECT_EQ(covered.size(), searches) << "some (fusion, sizes, scheduler) has no point";
  EXPECT_TRUE(spec.scheduler(spec.baseline));
}

INSTANTIATE_TEST_SUITE_P(Files, ConfigSweep, testing::ValuesIn(sweep_files()),
                         test_support::file_case_name);

// The complete example of docs/sweeps.md (its first ```yaml block), loaded as
// if it were configs/sweeps/example.yaml, so the documentation cannot drift.
TEST(ConfigSweeps, TheDocumentedExampleLoads) {
  std::ifstream in(SCHEDLAB_SOURCE_DIR "/docs/sweeps.md");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  size_t start = doc.find("```yaml\n");
  ASSERT_NE(start, std::string::npos) << "docs/sweeps.md has no ```yaml block";
  start += 8;
  const std::string text = doc.substr(start, doc.find("```", start) - start);
  plugin::Registry registry(plugin::plugin_search_path());
  LoadOptions options = cli_options(registry);
  SweepSpec spec;
  try {
    spec = parse_sweep_text(text, kSweepDir + "/example.yaml", options);
  } catch (const UserError& e) {
    FAIL() << e.what();
  }
  EXPECT_EQ(spec.name, "pointwise_study");
  EXPECT_EQ(spec.schedulers.size(), 4u);
  EXPECT_EQ(spec.fusions.size(), 2u);
  EXPECT_FALSE(expand(spec).empty());
}

TEST(ConfigSweeps, TheDirectoryHasExamples) {
  EXPECT_GE(sweep_files().size(), 2u) << kSweepDir;
}

}  // namespace
}  // namespace schedlab::sweep
