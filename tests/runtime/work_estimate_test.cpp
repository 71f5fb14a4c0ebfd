// The CPU emulation's work budget (runtime/work_estimate.h): the estimate is
// exact for loop nests without predicates that skip, a launch over the limit
// is refused with a user error naming the tensor doing the most work, and the
// limit comes from SCHEDLAB_CPU_MAX_WORK.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "schedlab/frontend/schedule_script.h"
#include "schedlab/runtime/executor.h"
#include "schedlab/runtime/work_estimate.h"
#include "test_support.h"

namespace schedlab::runtime::testing {
namespace {

/// The arguments a launch of `p` at `sizes` would get (shapes only).
std::vector<TensorArg> shapes(const PreparedKernel& p, const LaunchDims& dims,
                              const ir::SizeBindings& sizes) {
  std::vector<TensorArg> args;
  for (const kir::Param& param : p.kernel.params) {
    TensorArg a;
    a.sizes = param_shape(param, dims, sizes);
    args.push_back(a);
  }
  return args;
}

const ir::SizeBindings kSizes{{"N", 7}, {"K", 130}};

TEST(WorkEstimate, UnscheduledKernelIsOneThreadDoingEveryElementOfEveryTensor) {
  auto def = test_support::load_config_fusion("pointwise_add_mul");
  PreparedKernel p = prepare(*def.fusion, kSizes);
  LaunchDims dims = launch_dims(p.kernel, kSizes);
  auto work = emulated_work(p.kernel, dims, shapes(p, dims, kSizes));
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

TEST(WorkEstimate, RedundantProducerDominatesAndIsNamed) {
  auto def = test_support::load_config_fusion("pointwise_add_mul");
  frontend::apply_schedule_text(kRedundant, "test.sched", def, {});
  PreparedKernel p = prepare(*def.fusion, kSizes);
  LaunchDims dims = launch_dims(p.kernel, kSizes);
  auto args = shapes(p, dims, kSizes);
  auto work = emulated_work(p.kernel, dims, args);
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
