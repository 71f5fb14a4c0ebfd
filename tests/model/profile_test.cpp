// Profiles of real generated kernels (built-in plugins and schedule scripts
// on standard fusions): deterministic, sampling within a few percent of the
// full count, the stack frame of a Local array, coalescing of a strided
// schedule, and sampled launch shapes.
#include "schedlab/model/profile.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "profile_test_util.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/model/device.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace {

namespace model = schedlab::model;
namespace sweep = schedlab::sweep;
using schedlab::runtime::LaunchDims;

using model::testing_util::cache_dir;
using model::testing_util::cpu;
using model::testing_util::h200;
using model::testing_util::profile;
const std::vector<std::string> kFusionDirs = {SCHEDLAB_SOURCE_DIR "/configs/fusions"};

TEST(Profile, IsDeterministic) {
  auto a = profile("softmax", {{"N", 256}, {"K", 1024}}, "normalization");
  auto b = profile("softmax", {{"N", 256}, {"K", 1024}}, "normalization");
  EXPECT_EQ(model::profiles_json({a}), model::profiles_json({b}));
  EXPECT_GT(a.prediction.predicted_s, 0);
}

TEST(Profile, PointwiseIsCoalescedAndMovesItsIdealBytes) {
  auto p = profile("pointwise_add_mul", {{"N", 1024}, {"K", 1024}}, "pointwise");
  // x, y and out are read and written as 16-byte vectors, and so is the
  // broadcast b: the 2-D schedule indexes it by the inner loop alone.
  for (const auto& g : p.traffic.global) EXPECT_DOUBLE_EQ(g.efficiency(), 1.0) << g.tensor;
  EXPECT_NEAR(p.dram_bytes, double(p.ideal_bytes), 0.02 * double(p.ideal_bytes));
  EXPECT_GT(p.resources.registers, 0);
  EXPECT_EQ(p.resources.stack_bytes, 0);
  EXPECT_GT(p.instructions_per_thread, 0);
  EXPECT_GT(p.prediction.bandwidth_fraction, 0);
  EXPECT_LE(p.prediction.bandwidth_fraction, 1);
}

TEST(Profile, SamplingStaysWithinAFewPercentOfTheFullCount) {
  for (auto [fusion, plugin] :
       {std::pair{"softmax", "normalization"}, std::pair{"transpose2d", "transpose"},
        std::pair{"pointwise_add_mul", "pointwise"}}) {
    const schedlab::ir::SizeBindings sizes = {{"N", 1024}, {"K", 1024}};
    auto full = profile(fusion, sizes, plugin, 0);
    auto sampled = profile(fusion, sizes, plugin, 64);
    ASSERT_LT(sampled.sampled_blocks, full.sampled_blocks) << fusion;
    for (auto [what, f, s] :
         {std::tuple{"sector bytes", full.sector_bytes, sampled.sector_bytes},
          std::tuple{"dram bytes", full.dram_bytes, sampled.dram_bytes},
          std::tuple{"wavefronts", full.smem_wavefronts, sampled.smem_wavefronts},
          std::tuple{"predicted", full.prediction.predicted_s, sampled.prediction.predicted_s}})
      EXPECT_NEAR(s, f, 0.03 * f) << fusion << ": " << what;
  }
}

TEST(Profile, TransposeThroughAnUnpaddedTileIsBankConflictBound) {
  auto p = profile("transpose2d", {{"N", 2048}, {"K", 2048}}, "transpose", 512, {"pad=false"});
  EXPECT_GE(p.bank_conflict_ways, 8);
  EXPECT_EQ(p.prediction.limiter, "bank conflicts");
}

TEST(Profile, TransposeThroughAPaddedTileHasNoBankConflict) {
  // The plugin's default pads each 32-element f32 row by one (pad_shared):
  // a column read touches each bank once, every site takes its ideal wavefronts.
  auto p = profile("transpose2d", {{"N", 2048}, {"K", 2048}}, "transpose");
  EXPECT_DOUBLE_EQ(p.bank_conflict_ways, 1);
  EXPECT_NE(p.prediction.limiter, "bank conflicts");
  // f16 (64-element rows, padded by 2) and f64 (16, padded by 1) too.
  for (const char* fusion : {"transpose_f16", "transpose_f64"}) {
    auto q = profile(
        SCHEDLAB_SOURCE_DIR "/tests/script_plugin/fixtures/" + std::string(fusion) + ".yaml",
        {{"N", 2048}, {"K", 2048}}, "transpose");
    EXPECT_DOUBLE_EQ(q.bank_conflict_ways, 1) << fusion;
  }
}

TEST(Profile, TransposeThroughASwizzledTileHasNoBankConflict) {
  // swizzle=true XORs each 32-element f32 row's columns with the row number
  // (width 32) instead of padding it: a column read meets each bank once,
  // as padded, with no padding bytes. f16 (64-element rows, 32 units of two
  // elements) and f64 (16-element rows, width 16) too.
  const std::vector<std::string> swizzled = {"pad=false", "swizzle=true"};
  auto p = profile("transpose2d", {{"N", 2048}, {"K", 2048}}, "transpose", 512, swizzled);
  EXPECT_DOUBLE_EQ(p.bank_conflict_ways, 1);
  EXPECT_NE(p.prediction.limiter, "bank conflicts");
  for (const char* fusion : {"transpose_f16", "transpose_f64"}) {
    auto q = profile(
        SCHEDLAB_SOURCE_DIR "/tests/script_plugin/fixtures/" + std::string(fusion) + ".yaml",
        {{"N", 2048}, {"K", 2048}}, "transpose", 512, swizzled);
    EXPECT_DOUBLE_EQ(q.bank_conflict_ways, 1) << fusion;
  }
}

TEST(Profile, NormalizationSharedPathReadsWholeVectors) {
  // The shared path keeps rows in a [persist, threads, vector] layout and
  // reads them a vector at a time into registers: read element by element,
  // a warp's loads were `vector` elements apart (4-way conflicts for f32 at
  // vector=4 and bf16 at vector=8, 8-way for an f32 buffer of a bf16 row,
  // which the plugin now recomputes instead of keeping).
  struct Case {
    const char* fusion;
    int64_t k;
    std::vector<std::string> settings;
  };
  for (const Case& c : {Case{"softmax_bf16", 32768, {}}, Case{"layernorm_bf16", 65536, {}},
                        Case{"rmsnorm_bf16", 65536, {}},
                        Case{"softmax", 16384, {"persistence=shared"}}}) {
    auto p = profile(c.fusion, {{"N", 256}, {"K", c.k}}, "normalization", 16, c.settings);
    EXPECT_DOUBLE_EQ(p.bank_conflict_ways, 1) << c.fusion << " K=" << c.k;
    EXPECT_NE(p.prediction.limiter, "bank conflicts") << c.fusion << " K=" << c.k;
    EXPECT_GT(p.smem_wavefronts, 0) << c.fusion << ": the shared path";
  }
}

TEST(Profile, StridedScheduleScriptLosesCoalescingOnTheWrites) {
  // configs/schedules/transpose2d.sched iterates in x's order: reads
  // coalesced, writes to y strided by N.
  sweep::BoundFusion bf = sweep::bind_fusion("transpose2d", kFusionDirs, {{"N", 256}, {"K", 256}});
  schedlab::frontend::apply_schedule_file(
      SCHEDLAB_SOURCE_DIR "/configs/schedules/transpose2d.sched", bf.def, {});
  const schedlab::ir::Fusion& f = *bf.def.fusion;
  model::ProfileOptions o;
  o.cache_dir = cache_dir();
  auto p = model::profile_kernel(cpu(), schedlab::runtime::prepare(f, bf.sizes), f, bf.sizes,
                                 sweep::io_bytes(f, bf.sizes), h200(), o, "transpose2d");
  ASSERT_EQ(p.traffic.global.size(), 2u);
  for (const auto& g : p.traffic.global) {
    if (g.read_bytes > 0)
      EXPECT_DOUBLE_EQ(g.efficiency(), 1.0) << g.tensor;
    else
      EXPECT_DOUBLE_EQ(g.efficiency(), 0.125) << g.tensor;  // 4 of 32 bytes per sector
  }
}

TEST(Profile, SampledDimsKeepWholeRows) {
  LaunchDims d;
  d.grid = {256, 256, 1};
  EXPECT_EQ(model::sampled_dims(d, 512).grid, (std::array<int64_t, 3>{256, 2, 1}));
  d.grid = {100000, 1, 1};
  EXPECT_EQ(model::sampled_dims(d, 512).grid, (std::array<int64_t, 3>{512, 1, 1}));
  d.grid = {4, 4, 100};
  EXPECT_EQ(model::sampled_dims(d, 512).grid, (std::array<int64_t, 3>{4, 4, 32}));
  EXPECT_EQ(model::sampled_dims(d, 0).grid, d.grid);
}

TEST(Profile, RecordPredictionCarriesTheProfile) {
  auto p = profile("row_sum", {{"N", 512}, {"K", 512}}, "reduction");
  schedlab::report::Prediction r = model::record_prediction(p);
  EXPECT_EQ(r.device, "h200");
  EXPECT_DOUBLE_EQ(r.predicted_us, p.prediction.predicted_s * 1e6);
  EXPECT_EQ(r.limiter, p.prediction.limiter);
  EXPECT_NE(r.profile.find("\"registers\""), std::string::npos);
}

// The floor's chain, counted: a grid reduction's kernel (row_sum over few
// long rows: the reduction plugin splits each row over 128 blocks) has one
// grid reduction per thread, its block reduction's barriers and tree levels,
// and one barrier interval with loads.
TEST(Profile, TheChainCountsBarriersTreesAndGridReductions) {
  auto p = profile("row_sum", {{"N", 4}, {"K", 1048576}}, "reduction", 16);
  EXPECT_EQ(p.terms.grid_reductions, 1);
  EXPECT_EQ(p.terms.barriers, 2);         // sl_block_reduce_warps: two barriers
  EXPECT_EQ(p.terms.shuffle_levels, 10);  // 512 threads: 16 whole warps
  EXPECT_EQ(p.terms.read_phases, 1);
  const model::DeviceModel& d = h200();
  EXPECT_DOUBLE_EQ(
      p.prediction.chain_s,
      (d.dram_latency_ns + 2 * d.barrier_ns + 10 * d.shuffle_ns + d.grid_sync_ns) * 1e-9);
}

// Issue 33: no kernel is predicted under an empty kernel. Every standard
// fusion (configs/fusions) at its default sizes, under every built-in plugin
// that accepts it, is predicted at least the launch overhead plus a DRAM
// round trip (each reads its inputs), and the floor is part of the time.
TEST(Profile, EveryStandardFusionIsPredictedAboveAnEmptyKernel) {
  namespace fs = std::filesystem;
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(SCHEDLAB_SOURCE_DIR "/configs/fusions"))
    if (e.path().extension() == ".yaml") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  schedlab::plugin::Registry registry({SCHEDLAB_BINARY_DIR "/plugins"});
  const double floor = model::empty_kernel_s(h200()) + h200().dram_latency_ns * 1e-9;
  int profiled = 0;
  for (const std::string& path : paths)
    for (const auto& plugin : sweep::builtin_candidates(registry, nullptr)) {
      const std::string& name = plugin->name();
      sweep::BoundFusion bf = sweep::bind_fusion(path, {}, {});
      sweep::PluginRun run =
          sweep::schedule_with_plugin(*plugin, bf, model::device_properties(h200()), {});
      if (!run.accepted) continue;
      const schedlab::ir::Fusion& f = *bf.def.fusion;
      model::ProfileOptions o;
      o.cache_dir = cache_dir();
      o.max_blocks = 16;  // the floor does not depend on how many blocks are traced
      model::KernelProfile p =
          model::profile_kernel(cpu(), schedlab::runtime::prepare(f, bf.sizes), f, bf.sizes,
                                sweep::io_bytes(f, bf.sizes), h200(), o, path);
      const model::Prediction& pr = p.prediction;
      EXPECT_GE(pr.predicted_s, floor) << name << " on " << path;
      EXPECT_GE(pr.predicted_s, pr.launch_s + pr.chain_s) << name << " on " << path;
      EXPECT_DOUBLE_EQ(pr.launch_s, model::empty_kernel_s(h200()));
      ++profiled;
    }
  EXPECT_GE(profiled, 26);  // at least one plugin for each standard fusion
}

}  // namespace
