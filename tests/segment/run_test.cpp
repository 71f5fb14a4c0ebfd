// Segmented execution (sweep::compile_segments / run_segments): every
// standard fusion, cut by the segmenter and run one kernel per segment on the
// CPU backend, validates against the reference of the whole, unsegmented
// fusion. First with fake schedulers (segments left unscheduled), then with
// the real built-in plugins from the build's plugin directory, then with a
// test plugin and the real pointwise plugin together.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/cuda_backend.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "segment_test_util.h"
#include "test_support.h"

namespace schedlab::segment {
namespace {

using testing::no_reduction;
using testing::one_reduction;
using testing::ragged_sizes;

std::string cache_dir() {
  return std::string(SCHEDLAB_BINARY_DIR) + "/tests/segment/kernel_cache";
}

std::vector<std::string> fusion_files() {
  auto files = test_support::files_with_extension(test_support::config_fusion_dir(), ".yaml");
  for (const auto& f : test_support::files_with_extension(SEGMENT_FUSION_DIR, ".yaml"))
    files.push_back(f);
  return files;
}

/// The sizes each fusion runs at: its defaults and a ragged binding.
std::vector<ir::SizeBindings> sizes_of(const std::string& path) {
  auto def = frontend::load_fusion_file(path);
  return {frontend::bind_sizes(def, {}), ragged_sizes(*def.fusion)};
}

/// Runs bf's segmentation s (segments scheduled or not) on the CPU backend
/// and validates the outputs against the whole fusion's reference.
void run_and_validate(const sweep::BoundFusion& bf, const Segmentation& s,
                      const std::string& what) {
  auto backend = runtime::make_cpu_backend(model::model_device_properties(), cache_dir());
  auto inputs = ref::make_inputs(*bf.def.fusion, bf.sizes, 5, bf.def.input_ranges);
  auto want = ref::evaluate(*bf.def.fusion, inputs, bf.sizes);
  auto kernels = sweep::compile_segments(*backend, s, bf.sizes);
  ASSERT_EQ(kernels.size(), s.segments.size());
  auto got = sweep::run_segments(*backend, s, kernels, inputs, bf.sizes);
  sweep::Validation v = sweep::validate(*bf.def.fusion, bf.sizes, got, want);
  EXPECT_TRUE(v.ok) << what << ": " << v.summary() << "\n" << print_segmentation(s);
  // Every segment's kernel is also real CUDA: NVRTC compiles it for sm_90.
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string log;
    std::string image =
        runtime::nvrtc_compile(kernels[i].prepared.source, "sm_90", &log, cache_dir());
    EXPECT_FALSE(image.empty()) << what << ": segment " << i << ": " << log;
  }
}

class Segmented : public ::testing::TestWithParam<std::string> {};

// Fake schedulers: the algorithm and the execution, independent of plugins.
TEST_P(Segmented, FakeSchedulersValidate) {
  for (const ir::SizeBindings& sizes : sizes_of(GetParam())) {
    sweep::BoundFusion bf = sweep::bind_fusion(GetParam(), {}, sizes);
    Segmentation s = segment(*bf.def.fusion, bf.sizes, {one_reduction(), no_reduction()});
    ASSERT_TRUE(s.complete()) << print_segmentation(s);
    run_and_validate(bf, s, GetParam() + " at " + sweep::sizes_str(bf.sizes));
  }
}

/// The built-in heuristics that exist in this build.
std::vector<std::string> builtin_heuristics() {
  std::vector<std::string> r;
  for (const char* name : {"normalization", "reduction", "transpose", "pointwise"})
    if (std::filesystem::exists(plugin::builtin_plugin_dir() + "/" + name + ".so"))
      r.emplace_back(name);
  return r;
}

/// Segments and schedules with every built-in plugin of this build. Empty
/// when some part is left that none accepts: then *skip says why when the
/// heuristic that would take it is not built yet, and the test fails otherwise.
std::optional<sweep::SegmentedFusion> with_builtins(const sweep::BoundFusion& bf,
                                                    std::string* skip) {
  plugin::Registry registry({plugin::builtin_plugin_dir()});
  auto plugins = sweep::segmenter_plugins(registry);
  try {
    return sweep::segment_and_schedule(bf, plugins, {});
  } catch (const UserError& e) {
    std::string msg = e.message();
    if (builtin_heuristics().size() == 4 || msg.find("no scheduler accepts") == std::string::npos)
      ADD_FAILURE() << bf.def.fusion->name() << ": " << msg;
    else
      *skip = "not every built-in heuristic is built yet: " + msg;
    return std::nullopt;
  }
}

// The real built-in plugins: each segment scheduled by the plugin that took it.
TEST_P(Segmented, BuiltinPluginsValidate) {
  ASSERT_FALSE(builtin_heuristics().empty())
      << "no built-in plugin in " << plugin::builtin_plugin_dir();
  for (const ir::SizeBindings& sizes : sizes_of(GetParam())) {
    sweep::BoundFusion bf = sweep::bind_fusion(GetParam(), {}, sizes);
    std::string skip;
    auto sf = with_builtins(bf, &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    if (!sf) return;
    ASSERT_EQ(sf->runs.size(), sf->segmentation.segments.size());
    for (const sweep::PluginRun& run : sf->runs) EXPECT_TRUE(run.accepted);
    run_and_validate(bf, sf->segmentation, GetParam() + " at " + sweep::sizes_str(bf.sizes));
  }
}

INSTANTIATE_TEST_SUITE_P(Fusions, Segmented, ::testing::ValuesIn(fusion_files()),
                         test_support::file_case_name);

// Fusions no single built-in plugin takes: row_then_col (made for this: a
// row reduction feeding a column reduction) and the standard
// broadcast_reduce (a column sum and a row max of the same tensor).
TEST(SegmentedBuiltins, SomeFusionsNeedTwoSegments) {
  for (const std::string& fusion : {std::string(SEGMENT_FUSION_DIR) + "/row_then_col.yaml",
                                    test_support::config_fusion_dir() + "/broadcast_reduce.yaml"}) {
    sweep::BoundFusion bf = sweep::bind_fusion(fusion, {}, {});
    std::string skip;
    auto sf = with_builtins(bf, &skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
    if (!sf) return;
    EXPECT_GE(sf->segmentation.segments.size(), 2u) << print_segmentation(sf->segmentation);
    ASSERT_FALSE(sf->segmentation.log.empty());
    EXPECT_EQ(sf->segmentation.log.front().kind, Offer::Kind::Whole);
    EXPECT_TRUE(sf->segmentation.log.front().accepted_by.empty());
    // Every plugin the segmenter offered it to (the built-in heuristics, then
    // the others in the built-in directory: autosched) said why it would not
    // take the whole fusion.
    plugin::Registry registry({plugin::builtin_plugin_dir()});
    EXPECT_EQ(sf->segmentation.log.front().rejections.size(),
              sweep::segmenter_plugins(registry).size());
    run_and_validate(bf, sf->segmentation, fusion);
  }
}

// The test plugin one_reduction and the real pointwise plugin: softmax in
// three segments, the pointwise ones really scheduled (bound to threads).
TEST(SegmentedBuiltins, TestReductionPluginWithRealPointwise) {
  if (!std::filesystem::exists(plugin::builtin_plugin_dir() + "/pointwise.so"))
    GTEST_SKIP() << "pointwise is not built";
  plugin::Registry registry({SEGMENT_PLUGIN_DIR, plugin::builtin_plugin_dir()});
  auto plugins = sweep::segmenter_plugins(registry, {"one_reduction", "pointwise"});
  for (const ir::SizeBindings& sizes :
       {ir::SizeBindings{{"N", 3}, {"K", 5}}, ir::SizeBindings{{"N", 37}, {"K", 1030}}}) {
    sweep::BoundFusion bf =
        sweep::bind_fusion("softmax", {test_support::config_fusion_dir()}, sizes);
    sweep::SegmentedFusion sf = sweep::segment_and_schedule(bf, plugins, {});
    const auto& segs = sf.segmentation.segments;
    ASSERT_EQ(segs.size(), 3u) << print_segmentation(sf.segmentation);
    EXPECT_EQ(segs[0].scheduler, "one_reduction");
    EXPECT_EQ(segs[1].scheduler, "one_reduction");
    EXPECT_EQ(segs[2].scheduler, "pointwise");
    EXPECT_THAT(sf.runs[2].params_str, ::testing::HasSubstr("block="));
    bool bound = false;
    for (const ir::TensorView* t : segs[2].fusion.fusion->tensors())
      for (const ir::IterDomain* id : t->loop())
        bound |= id->parallel_type() == ir::ParallelType::TIDx;
    EXPECT_TRUE(bound) << "pointwise did not bind TIDx";
    run_and_validate(bf, sf.segmentation, "softmax at " + sweep::sizes_str(bf.sizes));
  }
}

// A plugin whose can_schedule throws (tests/plugin's `throwing`) counts as
// a rejection with the error as its reason; the next plugin takes the fusion.
TEST(SegmentedBuiltins, ThrowingCanScheduleIsARejection) {
  if (!std::filesystem::exists(plugin::builtin_plugin_dir() + "/pointwise.so"))
    GTEST_SKIP() << "pointwise is not built";
  plugin::Registry registry({TEST_PLUGIN_DIR, plugin::builtin_plugin_dir()});
  auto plugins = sweep::segmenter_plugins(registry, {"throwing", "pointwise"});
  sweep::BoundFusion bf = sweep::bind_fusion("add", {test_support::config_fusion_dir()}, {});
  sweep::SegmentedFusion sf = sweep::segment_and_schedule(bf, plugins, {});
  ASSERT_EQ(sf.segmentation.segments.size(), 1u);
  EXPECT_EQ(sf.segmentation.segments[0].scheduler, "pointwise");
  const Offer& whole = sf.segmentation.log.front();
  ASSERT_EQ(whole.rejections.size(), 1u);
  EXPECT_EQ(whole.rejections[0].scheduler, "throwing");
  EXPECT_THAT(whole.rejections[0].reason, ::testing::StartsWith("can_schedule failed: "));
  EXPECT_THAT(whole.rejections[0].reason, ::testing::HasSubstr("can_schedule exploded"));
  run_and_validate(bf, sf.segmentation, "add");
}

// Any other exception from a scheduler is not a verdict: it propagates.
TEST(Segmenter, NonUserExceptionsPropagate) {
  Scheduler thrower{"thrower", [](ir::Fusion&, const ir::SizeBindings&) -> Verdict {
                      throw std::runtime_error("not a user error");
                    }};
  auto def = test_support::load_config_fusion("add");
  EXPECT_THROW(segment(*def.fusion, {}, {thrower}), std::runtime_error);
}

}  // namespace
}  // namespace schedlab::segment
