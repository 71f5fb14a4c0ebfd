// The CPU emulation's work budget (runtime/work_estimate.h): the estimate is
// exact for loop nests without predicates that skip, a launch over the limit
// is refused with a user error naming the tensor doing the most work, and the
// limit comes from SCHEDLAB_CPU_MAX_WORK.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_script.h"
#include "schedlab/model/device.h"
#include "schedlab/ref/inputs.h"
#include "schedlab/runtime/cpu_backend.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/runtime/work_estimate.h"
#include "cpu_test_util.h"
#include "test_support.h"

namespace schedlab::runtime::testing {
namespace {

const ir::SizeBindings kSizes{{"N", 7}, {"K", 130}};

TEST(WorkEstimate, UnscheduledKernelIsOneThreadDoingEveryElementOfEveryTensor) {
  auto def = test_support::load_config_fusion("pointwise_add_mul");
  PreparedKernel p = prepare(*def.fusion, kSizes);
  LaunchDims dims = launch_dims(p.kernel, kSizes);
  auto work = emulated_work(p.kernel, dims, param_shapes(p.kernel, dims, kSizes)).buffers;
  // s, p, the broadcast of b, q, q * 2 and out: one loop nest each.
  ASSERT_FALSE(work.empty());
  for (const BufferWork& w : work) {
    SCOPED_TRACE(w.buffer->name);
    // b's broadcast iterates [1, K] or [N, K]; every other tensor [N, K].
    EXPECT_TRUE(w.per_thread == 7 * 130 || w.per_thread == 130) << w.per_thread;
  }
  EXPECT_EQ(dims.grid, (std::array<int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(dims.block, (std::array<int64_t, 3>{1, 1, 1}));
}

// Fuzz seed 2026 case 526 in small: the output is bound to threads and blocks
// but its producer is not, so every thread computes all of it.
constexpr const char* kRedundant =
    "split(out, 1, 32)\n"
    "parallelize(out, 0, BIDx)\n"
    "parallelize(out, 2, TIDx)\n";

TEST(WorkEstimate, ADynamicKernelsSizesAreBoundAsTheyAreRead) {
  // Fuzz seed 41 case 145: a size-generic kernel reads K = 16 * (K >> 4)
  // (divisibility specialization); its estimate must bind that quotient as
  // it binds K itself, or the unbound loops count once and a launch far over
  // the budget runs (the case timed out instead of being refused).
  auto def = test_support::load_config_fusion("pointwise_add_mul");
  frontend::apply_schedule_text(kRedundant, "test.sched", def, {});
  const ir::SizeBindings sizes{{"N", 7}, {"K", 128}};
  for (bool divisibility : {false, true}) {
    SCOPED_TRACE(divisibility ? "divisibility" : "no divisibility");
    PreparedKernel p = prepare(*def.fusion, sizes, {}, KernelOptions{true, false, divisibility});
    EXPECT_EQ(p.kernel.divisible.empty(), !divisibility);
    LaunchDims dims = launch_dims(p.kernel, sizes);
    auto work = emulated_work(p.kernel, dims, param_shapes(p.kernel, dims, sizes)).buffers;
    ASSERT_FALSE(work.empty());
    EXPECT_EQ(work.front().per_thread, 7 * 128);
  }
}

TEST(WorkEstimate, RedundantProducerDominatesAndIsNamed) {
  auto def = test_support::load_config_fusion("pointwise_add_mul");
  frontend::apply_schedule_text(kRedundant, "test.sched", def, {});
  PreparedKernel p = prepare(*def.fusion, kSizes);
  LaunchDims dims = launch_dims(p.kernel, kSizes);
  auto args = param_shapes(p.kernel, dims, kSizes);
  auto work = emulated_work(p.kernel, dims, args).buffers;
  ASSERT_GE(work.size(), 2u);
  // The largest first: an unbound producer, every element in every thread.
  EXPECT_EQ(work.front().per_thread, 7 * 130);
  EXPECT_EQ(work.back().per_thread, 5);  // out: ceil(130 / 32) serial iterations
  // 7 blocks x 32 threads.
  const std::string err = test_support::user_error_of(
      [&] { check_emulated_work(p.kernel, dims, args, /*limit=*/1000); });
  EXPECT_THAT(err, ::testing::HasSubstr("the CPU emulation would execute about"));
  EXPECT_THAT(err, ::testing::HasSubstr("x 32 threads x 7 blocks"));
  EXPECT_THAT(err, ::testing::HasSubstr(work.front().buffer->tv->describe() + " alone takes 910"));
  EXPECT_THAT(err, ::testing::HasSubstr("SCHEDLAB_CPU_MAX_WORK=0"));
  // A traced launch (the sanitizer) says so.
  EXPECT_THAT(test_support::user_error_of(
                  [&] { check_emulated_work(p.kernel, dims, args, 1000, /*traced=*/true); }),
              ::testing::HasSubstr("the traced (sanitized) CPU emulation would execute about"));
  // No limit, or a limit above the estimate: no error.
  EXPECT_NO_THROW(check_emulated_work(p.kernel, dims, args, 0));
  EXPECT_NO_THROW(check_emulated_work(p.kernel, dims, args, 1e12));
}

// Fuzz seed 1 case 2025, minimised: a Shared cache inlined into serial loops
// around the thread and block axes is computed in every thread, with two
// barriers around every element; the barriers (a fiber switch each on the
// CPU) cost the emulation far more than the stores (89 s), and the estimate
// counts them.
constexpr const char* kSharedUnboundFusion = R"(fusion: shared_unbound
inputs:
  x0: {dtype: f32, shape: [N, K, M]}
sizes: {K: 4, M: 17, N: 13}
body: |
  v10 = cast(x0 >= 0.25, f32)
outputs: [v10]
)";
constexpr const char* kSharedUnbound =
    "c1 = cache_after(x0)\n"
    "set_memory_type(c1, shared)\n"
    "merge(v10, 0)\n"
    "split(v10, 0, 128)\n"
    "split(v10, 0, 16)\n"
    "parallelize(v10, 3, BIDx)\n"
    "parallelize(v10, 1, BIDy)\n"
    "parallelize(v10, 2, TIDx)\n"
    "parallelize(v10, 0, Unroll)\n"
    "propagate_transformation(v10)\n"
    "parallelize_all_like(v10, pos=0)\n"
    "inline_most()\n";

TEST(WorkEstimate, BarriersAreCountedAndNamedWhenTheyDominate) {
  auto def = frontend::parse_fusion_text(kSharedUnboundFusion, "shared_unbound.yaml");
  frontend::apply_schedule_text(kSharedUnbound, "test.sched", def, {});
  const ir::SizeBindings sizes{{"N", 13}, {"K", 4}, {"M", 17}};
  PreparedKernel p = prepare(*def.fusion, sizes);
  LaunchDims dims = launch_dims(p.kernel, sizes);
  auto args = param_shapes(p.kernel, dims, sizes);
  EmulatedWork work = emulated_work(p.kernel, dims, args);
  // Two barriers around each of the 16 x 128 x 17 elements every thread
  // computes (and a few more around the loops).
  EXPECT_GE(work.barriers_per_thread, 2 * 16 * 128 * 17);
  double stores = 0;
  for (const BufferWork& b : work.buffers) stores += b.per_thread;
  EXPECT_EQ(work.per_thread(), stores + kBarrierCost * work.barriers_per_thread);
  EXPECT_EQ(work.total(), work.per_thread() * 128 * (16 * 17));
  EXPECT_GT(work.total(), cpu_work_limit());  // refused by default, as 89 s deserves
  const std::string err = test_support::user_error_of(
      [&] { check_emulated_work(p.kernel, dims, args, cpu_work_limit()); });
  EXPECT_THAT(err, ::testing::HasSubstr("barriers (__syncthreads, 32 statements each) alone take"));
  EXPECT_THAT(err, ::testing::HasSubstr("keep those tensors Local"));
}

// tests/model/mma_tile.sched: one warp per block, one mma.sync m16n8k16 tile
// per K step of 16. Each lane takes part in each tile: its 12 operand reads
// and 4 accumulator updates count as statements of the accumulator.
TEST(WorkEstimate, AnMmaTileCountsInEveryLaneOfItsWarp) {
  auto def = test_support::load_config_fusion("matmul_bf16");
  frontend::apply_schedule_file(SCHEDLAB_SOURCE_DIR "/tests/model/mma_tile.sched", def, {});
  const ir::SizeBindings sizes{{"M", 32}, {"N", 16}, {"K", 64}};
  PreparedKernel p = prepare(*def.fusion, sizes);
  LaunchDims dims = launch_dims(p.kernel, sizes);
  EmulatedWork work = emulated_work(p.kernel, dims, param_shapes(p.kernel, dims, sizes));
  EXPECT_EQ(work.mma_tiles_per_thread, 64 / 16);
  EXPECT_EQ(work.threads, 32);
  EXPECT_EQ(work.blocks, 2 * 2);
  // The accumulator's statements: its 4 zeroed elements and the tiles'.
  double acc = -1;
  for (const BufferWork& b : work.buffers)
    if (b.buffer->tv != nullptr && b.buffer->tv->describe().starts_with("T7")) acc = b.per_thread;
  EXPECT_EQ(acc, 4 + 4 * kMmaTileStatements);
  // Two barriers around each K step's operand tiles.
  EXPECT_EQ(work.barriers_per_thread, 4 * 2);
}

// A launch of some blocks of the grid (model/profile.h's sample): the
// arguments are the whole grid's, the budget is checked for the blocks
// launched, so the whole launch stays refused while a sample of it runs.
TEST(WorkEstimate, BoundArgsChecksTheBlocksItLaunches) {
  auto def = test_support::load_config_fusion("pointwise_add_mul");
  frontend::apply_schedule_text(kRedundant, "test.sched", def, {});
  PreparedKernel p = prepare(*def.fusion, kSizes);
  const LaunchDims dims = launch_dims(p.kernel, kSizes);
  ASSERT_EQ(dims.grid[0], 7);
  const EmulatedWork work = emulated_work(p.kernel, dims, param_shapes(p.kernel, dims, kSizes));
  const double per_block = work.per_thread() * work.threads;
  // Two blocks fit untraced; a traced launch, kTraceSlowdown times smaller
  // a budget, none.
  ::setenv("SCHEDLAB_CPU_MAX_WORK", std::to_string(2.5 * per_block).c_str(), 1);
  TempDir cache;
  auto backend = make_cpu_backend(model::model_device_properties(), cache.path());
  const auto inputs = ref::make_inputs(*def.fusion, kSizes, 1);
  EXPECT_THAT(test_support::user_error_of([&] { BoundArgs whole(*backend, p, inputs, kSizes); }),
              ::testing::HasSubstr("x 32 threads x 7 blocks), more than its limit"));
  LaunchDims two = dims;
  two.grid = {2, 1, 1};
  BoundArgs sample(*backend, p, inputs, kSizes, two);
  EXPECT_EQ(sample.dims().grid, dims.grid);  // sized for the whole grid
  EXPECT_EQ(sample.launched().grid, two.grid);
  auto compiled = backend->compile(p.source);
  EXPECT_NO_THROW(sample.launch(*compiled));
  auto traced = backend->compile(traced_source(p));
  const TraceKernel trace = trace_kernel(p, sample, kSizes);
  EXPECT_EQ(trace.dims.grid, two.grid);
  Sanitizer observer;
  EXPECT_THAT(test_support::user_error_of([&] { sample.launch_traced(*traced, trace, observer); }),
              ::testing::HasSubstr("traced (sanitized) CPU emulation would execute about"));
  ::setenv("SCHEDLAB_CPU_MAX_WORK", std::to_string(2.5 * per_block * kTraceSlowdown).c_str(), 1);
  EXPECT_NO_THROW(sample.launch_traced(*traced, trace, observer));
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
}

TEST(WorkEstimate, LimitComesFromTheEnvironment) {
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
  EXPECT_EQ(cpu_work_limit(), 2e10);
  EXPECT_EQ(cpu_work_limit(/*traced=*/true), 2e10 / kTraceSlowdown);
  ::setenv("SCHEDLAB_CPU_MAX_WORK", "0", 1);
  EXPECT_EQ(cpu_work_limit(), 0);
  ::setenv("SCHEDLAB_CPU_MAX_WORK", "1e6", 1);
  EXPECT_EQ(cpu_work_limit(), 1e6);
  EXPECT_EQ(cpu_work_limit(/*traced=*/true), 1e6 / kTraceSlowdown);
  ::setenv("SCHEDLAB_CPU_MAX_WORK", "lots", 1);
  EXPECT_THAT(test_support::user_error_of([] { cpu_work_limit(); }),
              ::testing::HasSubstr("SCHEDLAB_CPU_MAX_WORK: expected a number of statement "
                                   "instances (0: unlimited), found 'lots'"));
  ::unsetenv("SCHEDLAB_CPU_MAX_WORK");
}

}  // namespace
}  // namespace schedlab::runtime::testing
