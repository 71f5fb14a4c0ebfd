// The profile of a tensor-core kernel: the one-warp-per-CTA mma.sync tile of
// tests/model/mma_tile.sched (tests/matmul/mma_tile_test.cpp's schedule_tile).
// Its mma.sync count is exact, from the kernel IR (every kir::MmaTile a warp
// executes, edge tiles whole): 2 M N K FLOPs at multiples of 16 x 8 x 16, the
// padded tiles' elsewhere; a 4096^3 grid, far over the CPU emulation's
// budget whole, is profiled on the sampled blocks the traced budget allows.
#include <fmt/core.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "profile_test_util.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/runtime/work_estimate.h"
#include "schedlab/sweep/pipeline/pipeline.h"
#include "test_support.h"

namespace schedlab::model {
namespace {

using testing_util::cache_dir;
using testing_util::cpu;
using testing_util::h200;

struct Mmk {
  int64_t m, n, k;
};

/// matmul_bf16 at m x n x k under the mma tile schedule, profiled on h200
/// over at most `max_blocks` blocks.
KernelProfile profile_tile(const Mmk& s, int64_t max_blocks = 512) {
  const ir::SizeBindings sizes{{"M", s.m}, {"N", s.n}, {"K", s.k}};
  auto def = test_support::load_config_fusion("matmul_bf16");
  frontend::apply_schedule_file(SCHEDLAB_SOURCE_DIR "/tests/model/mma_tile.sched", def, {});
  const ir::Fusion& f = *def.fusion;
  const runtime::PreparedKernel prepared = runtime::prepare(f, sizes);
  EXPECT_THAT(prepared.source.source, ::testing::HasSubstr("sl_mma_m16n8k16<"));
  ProfileOptions o;
  o.cache_dir = cache_dir();
  o.max_blocks = max_blocks;
  return profile_kernel(cpu(), prepared, f, sizes, sweep::io_bytes(f, sizes), h200(), o,
                        "matmul_bf16");
}

int64_t ceil_to(int64_t v, int64_t q) {
  return (v + q - 1) / q * q;
}

TEST(MmaProfile, FlopsAreTheTilesTheWarpsExecute) {
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
  // Whole tiles: exactly 2 M N K (the PTX estimate gave 0.78 of it at 4096^3
  // and 3.1x on the CUDA-core plugin's tiles). Partial ones: the tile grid
  // the hardware runs, operands zero-filled past the end.
  for (const Mmk& s : {Mmk{16, 8, 16}, Mmk{64, 32, 128}, Mmk{130, 70, 48}, Mmk{2, 3, 5},
                       Mmk{33, 16, 64}}) {
    SCOPED_TRACE(fmt::format("{}x{}x{}", s.m, s.n, s.k));
    const KernelProfile p = profile_tile(s);
    const double tiles = double(ceil_to(s.m, 16) / 16 * ceil_to(s.n, 8) / 8 * ceil_to(s.k, 16) / 16);
    EXPECT_EQ(p.mma_instructions, tiles);
    EXPECT_EQ(p.flops, tiles * 4096);  // the bf16 cast of the result is no FP arithmetic
    if (s.m % 16 == 0 && s.n % 8 == 0 && s.k % 16 == 0) {
      EXPECT_EQ(p.flops, 2.0 * s.m * s.n * s.k);
    }
    EXPECT_EQ(p.fp_lane_ops, 0);
    EXPECT_GT(p.prediction.tensor_s, 0);
  }
}

TEST(MmaProfile, A4096CubeIsProfiledOnTheBlocksTheTracedBudgetAllows) {
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
  const Mmk s{4096, 4096, 4096};
  const KernelProfile p = profile_tile(s);
  // 256 x 512 blocks of one warp: the whole grid is over the plain budget, so
  // a launch of it stays refused...
  EXPECT_EQ(p.occupancy.grid_blocks, 256 * 512);
  auto def = test_support::load_config_fusion("matmul_bf16");
  frontend::apply_schedule_file(SCHEDLAB_SOURCE_DIR "/tests/model/mma_tile.sched", def, {});
  const ir::SizeBindings sizes{{"M", s.m}, {"N", s.n}, {"K", s.k}};
  const runtime::PreparedKernel prepared = runtime::prepare(*def.fusion, sizes);
  const runtime::EmulatedWork work = runtime::emulated_work(
      prepared.kernel, p.dims, runtime::param_shapes(prepared.kernel, p.dims, sizes));
  EXPECT_EQ(work.mma_tiles_per_thread, 4096 / 16);
  EXPECT_GT(work.total(), runtime::cpu_work_limit());
  // ...while the profile traced fewer than its 512 blocks, as many as fit the
  // traced budget.
  const double per_block = work.per_thread() * work.threads;
  EXPECT_LT(p.sampled_blocks, 512);
  EXPECT_GE(p.sampled_blocks, 1);
  EXPECT_LE(double(p.sampled_blocks) * per_block, runtime::cpu_work_limit(/*traced=*/true));
  EXPECT_GT(double(p.sampled_blocks + 1) * per_block, runtime::cpu_work_limit(/*traced=*/true));
  EXPECT_DOUBLE_EQ(p.scale, double(256 * 512) / double(p.sampled_blocks));

  // Exact: 2 M N K FLOPs in 4096^3 / 2048 mma.sync, the tensor term at the
  // device's mma.sync rate (132 SMs, 131072 blocks: the busiest SM's share x
  // 132 = 993 / 992.97).
  const double flops = 2.0 * s.m * s.n * s.k;
  EXPECT_EQ(p.flops, flops);
  EXPECT_EQ(p.mma_instructions, flops / 4096);
  const double busiest = std::ceil(131072.0 / 132) / 131072.0 * 132;
  EXPECT_NEAR(p.prediction.tensor_s, flops * busiest / (h200().mma_sync_tflops * 1e12), 1e-12);
  EXPECT_DOUBLE_EQ(p.prediction.compute_fraction,
                   p.flops / p.prediction.predicted_s / (h200().mma_sync_tflops * 1e12));
  // One 16 x 8 tile per warp re-reads its operands from Shared memory for
  // every mma.sync: not tensor-bound (docs/model.md, "Tensor cores", says
  // what a schedule needs to be).
  EXPECT_NE(p.prediction.limiter, "tensor");
  EXPECT_LT(p.prediction.compute_fraction, 0.85);

  auto j = nlohmann::json::parse(profiles_json({p}))[0];
  EXPECT_DOUBLE_EQ(j.at("flops").get<double>(), flops);
  EXPECT_DOUBLE_EQ(j.at("tensor_us").get<double>(), p.prediction.tensor_s * 1e6);
  EXPECT_DOUBLE_EQ(j.at("compute_fraction").get<double>(), p.prediction.compute_fraction);
  EXPECT_EQ(j.at("sampled_blocks").get<int64_t>(), p.sampled_blocks);
}

TEST(MmaProfile, TheSampleShrinksToTheBudgetAndNotBelowOneBlock) {
  runtime::EmulatedWork w;
  w.buffers.push_back({nullptr, 100});  // 100 statements per thread
  w.threads = 32;                       // 3200 per block
  EXPECT_EQ(sample_blocks_within(512, w, 0), 512);        // no budget
  EXPECT_EQ(sample_blocks_within(512, w, 1e9), 512);      // fits
  EXPECT_EQ(sample_blocks_within(512, w, 32000), 10);     // ten blocks fit
  EXPECT_EQ(sample_blocks_within(512, w, 3199), 1);       // one block, refused at launch
  EXPECT_EQ(sample_blocks_within(0, w, 32000), 0);        // the whole grid asked for
  w.mma_tiles_per_thread = 1;                             // counted by the Walker, not here
  EXPECT_EQ(sample_blocks_within(512, w, 32000), 10);
}

// The floor's chain counts a cp.async's round trip at the wait_group that
// lands it: configs/schedules/matmul_mma_async.sched issues step i + stages
// - 1 before it waits for step i, so `stages` round trips overlap and 12 K
// steps of 16 take ceil(12 / stages) of them (12 before, every interval with
// a global load). The barriers stay (2 per step: the stages' landing before
// the mma tile reads them in place, and their reuse after).
TEST(MmaProfile, CpAsyncStagesOverlapTheirRoundTripsInTheChain) {
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
  const ir::SizeBindings sizes{{"M", 16}, {"N", 8}, {"K", 192}};
  for (int64_t stages : {2, 3, 4}) {
    SCOPED_TRACE(fmt::format("stages={}", stages));
    auto def = test_support::load_config_fusion("matmul_bf16");
    frontend::apply_schedule_file(SCHEDLAB_SOURCE_DIR "/configs/schedules/matmul_mma_async.sched",
                                  def, {{"stages", stages}});
    const ir::Fusion& f = *def.fusion;
    const runtime::PreparedKernel prepared = runtime::prepare(f, sizes);
    ASSERT_THAT(prepared.source.source, ::testing::HasSubstr("sl_cp_async_wait<"));
    ProfileOptions o;
    o.cache_dir = cache_dir();
    const KernelProfile p = profile_kernel(cpu(), prepared, f, sizes, sweep::io_bytes(f, sizes),
                                           h200(), o, "matmul_bf16");
    EXPECT_EQ(p.traffic.block_read_phases, (12 + stages - 1) / stages);
    EXPECT_EQ(p.traffic.block_barriers, 24);
  }
}

}  // namespace
}  // namespace schedlab::model
