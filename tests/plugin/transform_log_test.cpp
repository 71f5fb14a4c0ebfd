// The transform log (schedlab/plugin/transform_log.h): every standard fusion
// scheduled by every built-in plugin that takes it, its log serialized, read
// back and replayed on a fresh copy of the fusion, gives the same kernel,
// byte for byte. That is what lets `--isolate` replay in the host a schedule
// a plugin made in a worker. And a damaged log is an error, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "schedlab/plugin/host.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/plugin/transform_log.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::plugin {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::shared_ptr<const Plugin> builtin(const std::string& name) {
  static std::map<std::string, std::shared_ptr<const Plugin>> loaded;
  auto& p = loaded[name];
  if (!p) p = load_plugin(std::string(BUILTIN_PLUGIN_DIR) + "/" + name + ".so");
  return p;
}

std::vector<std::string> standard_fusions() {
  std::vector<std::string> r;
  for (const auto& e : fs::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions"))
    if (e.path().extension() == ".yaml") r.push_back(e.path().string());
  std::sort(r.begin(), r.end());
  return r;
}

std::string kernel_of(const ir::Fusion& f, const ir::SizeBindings& sizes) {
  return runtime::prepare(f, sizes).source.source;
}

TEST(TransformLog, EveryBuiltinScheduleReplaysToTheSameKernel) {
  int replayed = 0;
  for (const std::string& path : standard_fusions()) {
    static Registry registry({BUILTIN_PLUGIN_DIR});
    for (const auto& plugin : sweep::builtin_candidates(registry, nullptr)) {
      sweep::BoundFusion bf = sweep::bind_fusion(path, {}, {});
      sweep::PluginRun run = sweep::schedule_with_plugin(*plugin, bf, std::nullopt, {});
      if (!run.accepted) continue;
      SCOPED_TRACE(plugin->name() + " on " + path);
      const TransformLog back = parse_log(serialize(run.transforms), "test");
      ASSERT_EQ(serialize(back), serialize(run.transforms));
      sweep::BoundFusion fresh = sweep::bind_fusion(path, {}, {});
      replay(*fresh.def.fusion, back);
      EXPECT_EQ(kernel_of(*fresh.def.fusion, fresh.sizes), kernel_of(*bf.def.fusion, bf.sizes));
      ++replayed;
    }
  }
  EXPECT_GE(replayed, 20);  // every standard fusion has a built-in that takes it
}

TEST(TransformLog, TheMultiPassPathsRecomputeStepsReplayToTheSameKernel) {
  // persistence=none recomputes softmax's e and the bf16 casts (recompute,
  // ABI 1.5): logged as steps naming the copy's readers, replayed alike.
  for (const char* fusion : {"softmax", "layernorm_bf16"}) {
    SCOPED_TRACE(fusion);
    const std::string path = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/" + fusion + ".yaml";
    sweep::BoundFusion bf = sweep::bind_fusion(path, {}, {});
    sweep::PluginRun run =
        sweep::schedule_with_plugin(*builtin("normalization"), bf, std::nullopt, {"persistence=none"});
    ASSERT_TRUE(run.accepted);
    int recomputes = 0;
    for (const Transform& t : run.transforms) recomputes += t.op == Transform::Op::Recompute;
    EXPECT_GE(recomputes, 2);
    const TransformLog back = parse_log(serialize(run.transforms), "test");
    ASSERT_EQ(serialize(back), serialize(run.transforms));
    sweep::BoundFusion fresh = sweep::bind_fusion(path, {}, {});
    replay(*fresh.def.fusion, back);
    EXPECT_EQ(kernel_of(*fresh.def.fusion, fresh.sizes), kernel_of(*bf.def.fusion, bf.sizes));
  }
}

TEST(TransformLog, AScriptIsLoggedWithItsTextAndReplaysWithoutTheFile) {
  const std::string dir = ::testing::TempDir() + "/transform_log_script";
  fs::create_directories(dir);
  const std::string script = dir + "/pw.sched";
  fs::copy_file(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules/pointwise_add_mul.sched",
                script, fs::copy_options::overwrite_existing);
  const std::string fusion = std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/pointwise_add_mul.yaml";
  sweep::BoundFusion bf = sweep::bind_fusion(fusion, {}, {});
  sweep::PluginRun run =
      sweep::schedule_with_plugin(*builtin("script"), bf, std::nullopt, {"script=" + script});
  ASSERT_TRUE(run.accepted) << run.reason;
  ASSERT_EQ(run.transforms.size(), 1u);
  EXPECT_EQ(op_name(run.transforms[0].op), "apply_schedule_script");
  fs::remove(script);  // the replay must not need it
  sweep::BoundFusion fresh = sweep::bind_fusion(fusion, {}, {});
  replay(*fresh.def.fusion, parse_log(serialize(run.transforms), "test"));
  EXPECT_EQ(kernel_of(*fresh.def.fusion, fresh.sizes), kernel_of(*bf.def.fusion, bf.sizes));
}

TEST(TransformLog, ATensorIndexOutOfRangeNamesTheStep) {
  sweep::BoundFusion bf = sweep::bind_fusion(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/pointwise_add_mul.yaml", {}, {});
  TransformLog log = {Transform(Transform::Op::Merge, {0}, {0, 1}),
                      Transform(Transform::Op::Split, {999}, {0, 128, 1})};
  try {
    replay(*bf.def.fusion, log);
    FAIL() << "expected a user error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("step 2 (split)"));
    EXPECT_THAT(e.what(), HasSubstr("tensor index 999 is out of range"));
  }
}

TEST(TransformLog, ShortArgumentsAndUnknownEnumsAreErrors) {
  sweep::BoundFusion bf = sweep::bind_fusion(
      std::string(SCHEDLAB_SOURCE_DIR) + "/configs/fusions/pointwise_add_mul.yaml", {}, {});
  EXPECT_THROW(apply(*bf.def.fusion, Transform(Transform::Op::Split, {0}, {0})), UserError);
  EXPECT_THROW(apply(*bf.def.fusion, Transform(Transform::Op::Parallelize, {0}, {0, 99})),
               UserError);
  EXPECT_THROW(apply(*bf.def.fusion, Transform(Transform::Op::Reorder, {0}, {0})), UserError);
}

TEST(TransformLog, MalformedJsonIsAUserErrorNamingTheSource) {
  for (const char* bad : {"", "{}", "[{\"op\": \"fly\", \"t\": [], \"i\": []}]", "[{\"op\": 3}]",
                          "[{\"op\": \"split\", \"t\": \"x\", \"i\": []}]"}) {
    try {
      parse_log(bad, "the worker's log");
      FAIL() << "accepted " << bad;
    } catch (const UserError& e) {
      EXPECT_THAT(e.what(), HasSubstr("the worker's log")) << bad;
    }
  }
}

}  // namespace
}  // namespace schedlab::plugin
