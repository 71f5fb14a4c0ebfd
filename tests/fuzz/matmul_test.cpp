// The fuzzer's matmul kind (core/fuzz/matmul_gen.cpp, docs/fuzz.md
// "Matmuls"): a fixed seed draws matmuls and linears among its cases, each a
// contraction followed by its epilogue, with every feature the kind has; and
// those cases, run as the campaign runs them (both paths, the sanitizer on),
// validate on the CPU backend. Most bf16/f16 ones get a tensor-core schedule
// (fuse_mma + mma_tile: warps, tiles per warp, cp.async stages), which
// validates traced too.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "schedlab/fuzz/fuzz.h"
#include "schedlab/plugin/registry.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::fuzz {
namespace {

bool is_matmul(const Case& c) {
  return c.fusion.features.count("matmul") || c.fusion.features.count("linear");
}

/// The indices below `cases` of seed `seed` whose fusion is of the matmul kind.
std::vector<uint64_t> matmul_cases(uint64_t seed, uint64_t cases) {
  std::vector<uint64_t> r;
  for (uint64_t i = 0; i < cases; ++i)
    if (is_matmul(generate_case(seed, i))) r.push_back(i);
  return r;
}

/// fuzz_slice's campaign (`schedlab fuzz --seed 2026 --cases 200 --only ...
/// --sanitize`) on the cases `only`, the segmenter using registry's plugins.
CampaignOptions slice_campaign(const std::vector<uint64_t>& only, plugin::Registry& registry) {
  CampaignOptions o;
  o.seed = 2026;
  o.cases = 200;
  o.only = only;
  o.run.sanitize = true;
  o.run.cache_dir = std::string(SCHEDLAB_BINARY_DIR) + "/tests/fuzz/kernel_cache";
  o.run.timeout = std::chrono::milliseconds(120000);
  o.run.plugins = sweep::segmenter_plugins(registry);
  return o;
}

TEST(FuzzMatmul, AFixedSeedDrawsDozensOfMatmulsInAFewHundredCases) {
  // One case in eight or so (kMatmulChance 0.12): about 36 of 300.
  const size_t n = matmul_cases(1, 300).size();
  EXPECT_GE(n, 20u);
  EXPECT_LE(n, 60u);
}

TEST(FuzzMatmul, AMatmulCaseIsAContractionThenAnEpilogue) {
  for (uint64_t i : matmul_cases(1, 100)) {
    const GenFusion f = generate_case(1, i).fusion;
    SCOPED_TRACE(f.text());
    ASSERT_FALSE(f.body.empty());
    const std::string& first = f.body.front().expr;
    EXPECT_TRUE(first.rfind("matmul(", 0) == 0 || first.rfind("linear(", 0) == 0) << first;
    // The operands feed the contraction and nothing else (their K axis is
    // not in the result's shape), except as a copied output (set).
    for (size_t s = 1; s < f.body.size(); ++s) {
      if (f.body[s].expr.rfind("set(", 0) == 0) continue;
      for (const std::string& u : f.body[s].uses)
        for (const char* operand : {"a", "at", "b", "bt", "x", "w", "wt"})
          EXPECT_NE(u, operand) << f.body[s].name << " = " << f.body[s].expr;
    }
  }
}

TEST(FuzzMatmul, MatmulCasesCoverTheKindsFeatures) {
  std::set<std::string> seen;
  for (uint64_t i : matmul_cases(1, 1000)) {
    const Case c = generate_case(1, i);
    seen.insert(c.fusion.features.begin(), c.fusion.features.end());
  }
  for (const char* f :
       {"matmul", "linear", "linear_bias", "linear_rank1", "matmul_batch",
        "matmul_batch_broadcast", "matmul_transposed", "matmul_bf16", "matmul_f16", "matmul_f32",
        "matmul_aligned_16", "matmul_unaligned", "matmul_extent_1", "epilogue_row", "epilogue_col",
        "epilogue_res", "epilogue_gelu", "reduce_sum", "output_bf16"})
    EXPECT_TRUE(seen.count(f)) << "no matmul case with feature " << f << " in 1000 cases";
}

bool has_tensor_cores(const Case& c) { return c.schedule.features.count("mma_tile") > 0; }

TEST(FuzzMatmul, MostHalfMatmulsGetATensorCoreSchedule) {
  // 85 % of the bf16/f16 contractions with an M and an N axis and no
  // epilogue reduction (schedule_gen.cpp's TensorCoreSchedule): a dozen and
  // more in 300 cases, each a fuse_mma, an mma_tile and Shared operands.
  int n = 0;
  for (uint64_t i = 0; i < 300; ++i) {
    const Case c = generate_case(1, i);
    if (!has_tensor_cores(c)) continue;
    ++n;
    EXPECT_TRUE(is_matmul(c)) << "case " << i;
    EXPECT_FALSE(c.fusion.features.count("matmul_f32")) << "case " << i;
    EXPECT_TRUE(c.schedule.features.count("fuse_mma")) << "case " << i;
    EXPECT_TRUE(c.schedule.features.count("mma_operand_shared")) << "case " << i;
  }
  EXPECT_GE(n, 12);
}

TEST(FuzzMatmul, TensorCoreSchedulesCoverWarpsTilesAndStages) {
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 1000; ++i) {
    const Case c = generate_case(1, i);
    if (has_tensor_cores(c)) seen.insert(c.schedule.features.begin(), c.schedule.features.end());
  }
  for (const char* f : {"mma_warps_1", "mma_warps_2", "mma_warps_4", "mma_tiles_per_warp", "TIDz",
                        "TIDy", "BIDz", "cp_async", "mma_async_stages_1", "mma_async_stages_2",
                        "circular_buffer"})
    EXPECT_TRUE(seen.count(f)) << "no tensor-core schedule with feature " << f << " in 1000 cases";
}

TEST(FuzzMatmul, TheTensorCoreCasesOfAFixedSeedValidateUnderTheSanitizer) {
  // The first tensor-core cases of fuzz_slice's seed, as the campaign runs
  // them with --sanitize: every schedule run validates (mma.sync emulated on
  // the CPU, no race, no uninitialised read: case 49 found a pending cp.async
  // read, soundness/cp_async_after_plain_tile) or is refused (an epilogue
  // that does not fit the tile), most validate; every segmenter run validates.
  std::vector<uint64_t> only;
  for (uint64_t i = 0; i < 200 && only.size() < 6; ++i)
    if (has_tensor_cores(generate_case(2026, i))) only.push_back(i);
  ASSERT_EQ(only.size(), 6u);
  plugin::Registry registry(
      plugin::plugin_search_path({std::string(SCHEDLAB_BINARY_DIR) + "/plugins"}));
  CampaignOptions o = slice_campaign(only, registry);
  o.on_case = [&](const CaseResult& r) {
    EXPECT_TRUE(r.tensor_cores);
    EXPECT_TRUE(r.scheduled.cls == RunClass::Validated || r.scheduled.cls == RunClass::Refused)
        << failure_line(r.index, Path::Schedule, r.scheduled);
    EXPECT_EQ(r.segmented.cls, RunClass::Validated)
        << failure_line(r.index, Path::Segmenter, r.segmented);
  };
  const Summary s = run_campaign(o);
  EXPECT_EQ(s.failures(), 0u) << s.line();
  EXPECT_GE(s.tensor_cores[static_cast<size_t>(RunClass::Validated)], 4u) << s.tensor_core_line();
  EXPECT_EQ(s.tensor_core_line().rfind("tensor-core schedules (fuse_mma + mma_tile): 6, ", 0), 0u)
      << s.tensor_core_line();
}

TEST(FuzzMatmul, TheMatmulCasesOfAFixedSeedValidateOnBothPaths) {
  // The first matmul cases of fuzz_slice's seed, as `schedlab fuzz --seed
  // 2026 --cases 200 --only ... --sanitize` runs them (dynamic sizes and
  // fast math by case number): every segmenter run validates; a schedule
  // run validates or is refused (a schedule lowering refuses is a test too),
  // and some validate.
  std::vector<uint64_t> only = matmul_cases(2026, 200);
  ASSERT_GE(only.size(), 8u);
  only.resize(8);
  plugin::Registry registry(
      plugin::plugin_search_path({std::string(SCHEDLAB_BINARY_DIR) + "/plugins"}));
  CampaignOptions o = slice_campaign(only, registry);
  ASSERT_FALSE(o.run.plugins.empty());
  int scheduled = 0;
  o.on_case = [&](const CaseResult& r) {
    EXPECT_TRUE(r.scheduled.cls == RunClass::Validated || r.scheduled.cls == RunClass::Refused)
        << failure_line(r.index, Path::Schedule, r.scheduled);
    EXPECT_EQ(r.segmented.cls, RunClass::Validated)
        << failure_line(r.index, Path::Segmenter, r.segmented);
    scheduled += r.scheduled.cls == RunClass::Validated;
  };
  const Summary s = run_campaign(o);
  EXPECT_EQ(s.cases, 8u);
  EXPECT_EQ(s.failures(), 0u) << s.line();
  EXPECT_GE(scheduled, 2) << s.line();
}

}  // namespace
}  // namespace schedlab::fuzz
