// The index type of generated kernels: int32 while every tensor has fewer
// than 2^31 elements, int64 from there on (runtime::prepare, schedlab/runtime/executor.h). A tensor that
// large does not fit the test machine, so the choice is checked through
// runtime::prepare without executing; a small kernel lowered with 64-bit
// indices explicitly runs on the CPU backend.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "lower_test_util.h"
#include "schedlab/lower/lower.h"

namespace schedlab::lower::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// pointwise_add_mul flattened, split by 128 and bound BIDx/TIDx.
frontend::FusionDefinition tiled_pointwise() {
  auto def = load("pointwise_add_mul");
  ir::Fusion& f = *def.fusion;
  ir::TensorView* out = named(f, "out");
  out->merge(0)->split(0, 128);
  out->parallelize(0, ir::ParallelType::BIDx);
  out->parallelize(1, ir::ParallelType::TIDx);
  sched::propagate_transformation(out);
  sched::parallelize_all_like(out);
  sched::inline_most(f);
  return def;
}

TEST(IndexType, PrepareSwitchesToInt64AtTwoToThe31Elements) {
  auto def = tiled_pointwise();
  struct Case {
    int64_t n, k;
    int bits;
  };
  for (Case c : {Case{3, 5, 32}, Case{1, (int64_t{1} << 31) - 1, 32}, Case{2, int64_t{1} << 30, 64},
                 Case{65536, 65537, 64}}) {
    SCOPED_TRACE("N=" + std::to_string(c.n) + " K=" + std::to_string(c.k));
    runtime::PreparedKernel p = runtime::prepare(*def.fusion, {{"N", c.n}, {"K", c.k}});
    EXPECT_EQ(p.kernel.index_bits, c.bits);
    EXPECT_EQ(p.source.index_bits, c.bits);
    if (c.bits == 64) {
      EXPECT_THAT(p.source.source, HasSubstr("typedef int64_t sl_index_t;"));
      EXPECT_THAT(p.source.source, Not(HasSubstr("typedef int32_t sl_index_t;")));
    } else {
      EXPECT_THAT(p.source.source, HasSubstr("typedef int32_t sl_index_t;"));
    }
    expect_nvrtc_accepts(p.source);
  }
}

TEST(IndexType, OnlyTheTypedefDiffers) {
  // Kernels are size-generic: the index width is one typedef, and the kernel
  // function text is the same.
  auto def = tiled_pointwise();
  kir::Kernel k32 = lower::lower(*def.fusion, 32);
  kir::Kernel k64 = lower::lower(*def.fusion, 64);
  EXPECT_EQ(codegen::print_kernel(k32), codegen::print_kernel(k64));
  std::string u32 = codegen::print_cuda(k32), u64 = codegen::print_cuda(k64);
  size_t at = u32.find("typedef int32_t sl_index_t;");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(u32.replace(at, 27, "typedef int64_t sl_index_t;"), u64);
}

TEST(IndexType, ThreadAndBlockIndicesAreReadAsTheIndexType) {
  // CUDA's threadIdx/blockIdx are unsigned int: blockIdx.x * 128 computed in
  // them wraps at 2^32, which an int64 kernel's flattened index passes.
  auto def = tiled_pointwise();
  std::string text = codegen::print_kernel(lower::lower(*def.fusion, 64));
  EXPECT_THAT(text, HasSubstr("(sl_bx * 128) + sl_tx"));
  EXPECT_THAT(text, Not(::testing::ContainsRegex("[^)]blockIdx\\.x \\*")));
}

TEST(IndexType, Int64KernelRunsOnCpu) {
  auto def = tiled_pointwise();
  auto plain = load("pointwise_add_mul");
  runtime::PreparedKernel p;
  p.kernel = lower::lower(*def.fusion, 64);
  p.source = source_of(p.kernel);
  ASSERT_EQ(p.source.index_bits, 64);
  ASSERT_THAT(p.source.source, HasSubstr("typedef int64_t sl_index_t;"));
  expect_nvrtc_accepts(p.source);
  auto compiled = cpu_backend().compile(p.source);
  for (const ir::SizeBindings& sizes :
       {ir::SizeBindings{{"N", 1}, {"K", 1}}, ir::SizeBindings{{"N", 33}, {"K", 130}}}) {
    SCOPED_TRACE(sizes_str(sizes));
    EXPECT_EQ(run_and_compare(plain, p, *compiled, sizes), "") << codegen::print_kernel(p.kernel);
  }
}

}  // namespace
}  // namespace schedlab::lower::testing
