// Every sweep in configs/sweeps loads against the real built-in plugins
// (their schemas, ranges and choices) and expands to at least one point per
// (fusion, sizes, scheduler).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/spec.h"
#include "schedlab/sweep/strategy.h"
#include "test_support.h"

namespace schedlab::sweep {
namespace {

const std::string kSweepDir = SCHEDLAB_SOURCE_DIR "/configs/sweeps";

std::vector<std::string> sweep_files() {
  return test_support::files_with_extension(kSweepDir, ".yaml");
}

class ConfigSweep : public testing::TestWithParam<std::string> {};

TEST_P(ConfigSweep, LoadsAgainstTheBuiltinPlugins) {
  plugin::Registry registry(plugin::plugin_search_path());
  LoadOptions options{{test_support::config_fusion_dir()},
                      {std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules"},
                      registry_lookup(registry)};
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
  for (const FusionSpec& f : spec.fusions) searches += f.sizes.size() * spec.schedulers.size();
  EXPECT_EQ(covered.size(), searches) << "some (fusion, sizes, scheduler) has no point";
  EXPECT_TRUE(spec.scheduler(spec.baseline));
}

INSTANTIATE_TEST_SUITE_P(Files, ConfigSweep, testing::ValuesIn(sweep_files()),
                         test_support::file_case_name);

TEST(ConfigSweeps, TheDirectoryHasExamples) {
  EXPECT_GE(sweep_files().size(), 2u) << kSweepDir;
}

}  // namespace
}  // namespace schedlab::sweep
