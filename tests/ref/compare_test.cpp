// Validation tolerances and comparison of kernel outputs with the reference.
#include "schedlab/ref/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "schedlab/ir/arith.h"

namespace schedlab::ref {
namespace {

using ir::DataType;
using ir::SizeExpr;

HostTensor tensor(std::vector<int64_t> shape, std::vector<double> data) {
  return {DataType::F32, std::move(shape), std::move(data)};
}

TEST(Compare, WithinAndOutsideTolerance) {
  auto want = tensor({2, 2}, {1.0, 2.0, 3.0, 4.0});
  EXPECT_TRUE(compare(tensor({2, 2}, {1.0, 2.0, 3.0, 4.00001}), want, {1e-5, 0.0}).ok);
  auto c = compare(tensor({2, 2}, {1.0, 2.0, 3.5, 4.0}), want, {1e-5, 1e-6});
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.mismatches, 1);
  EXPECT_THAT(c.first_mismatch, ::testing::HasSubstr("element 2 [1, 0]: got 3.5, expected 3"));
}

TEST(Compare, NanMatchesOnlyNanAndShapesMustAgree) {
  EXPECT_TRUE(compare(tensor({1}, {NAN}), tensor({1}, {NAN}), {}).ok);
  EXPECT_FALSE(compare(tensor({1}, {0.0}), tensor({1}, {NAN}), {}).ok);
  auto c = compare(tensor({2}, {0, 0}), tensor({1, 2}, {0, 0}), {});
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.first_mismatch, ::testing::HasSubstr("shape [2], expected [1, 2]"));
}

// Fuzz seed 3 case 335: a product of 1023 factors near 1.16 is 2.7e77 in the
// double reference and inf in an f32 kernel, which is what f32 stores.
TEST(Compare, BeyondTheDtypesRangeMatchesInfOfTheSameSign) {
  EXPECT_TRUE(compare(tensor({2}, {INFINITY, -INFINITY}), tensor({2}, {2.7e77, -1e39}), {}).ok);
  EXPECT_FALSE(compare(tensor({1}, {-INFINITY}), tensor({1}, {2.7e77}), {}).ok);
  EXPECT_FALSE(compare(tensor({1}, {INFINITY}), tensor({1}, {3e38}), {}).ok);  // f32 holds 3e38
  EXPECT_FALSE(compare(tensor({1}, {3e38}), tensor({1}, {2.7e77}), {}).ok);
  const HostTensor f64{DataType::F64, {1}, {2.7e77}};
  EXPECT_FALSE(compare(HostTensor{DataType::F64, {1}, {INFINITY}}, f64, {}).ok);
}

// Fuzz seed 1 case 3218: a product of 512 f32 factors (4.3e17) came out
// 1.05e-5 off relative; a product's error is relative and grows with n.
TEST(Compare, ProductToleranceGrowsRelatively) {
  Tolerance sum = reduction_tolerance(DataType::F32, 512);
  Tolerance prod = reduction_tolerance(DataType::F32, 512, 512);
  EXPECT_EQ(sum.rtol, default_tolerance(DataType::F32).rtol);
  EXPECT_DOUBLE_EQ(prod.rtol, default_tolerance(DataType::F32).rtol + 512 * 0x1p-24);
  EXPECT_EQ(prod.atol, sum.atol);
  EXPECT_TRUE(compare(tensor({1}, {4.32842887e17}), tensor({1}, {4.32838364e17}), prod).ok);
  EXPECT_FALSE(compare(tensor({1}, {4.32842887e17}), tensor({1}, {4.32838364e17}), sum).ok);
  EXPECT_EQ(reduction_tolerance(DataType::I32, 512, 512).rtol,
            default_tolerance(DataType::I32).rtol);  // integers are exact
}

// bf16 values have f32's range: its absolute tolerance must not swallow
// small outputs (softmax over 4096 elements: each below 1e-2), while a
// rounding that lands one bf16 ulp (2^-8 relative) away still matches.
TEST(Compare, Bf16ToleranceIsRelative) {
  const Tolerance tol = default_tolerance(DataType::BF16);
  const HostTensor want{DataType::BF16, {2}, {0.0018310546875, 3.0517578125e-05}};
  EXPECT_FALSE(compare(HostTensor{DataType::BF16, {2}, {0.0, 0.0}}, want, tol).ok);
  const HostTensor one_ulp{
      DataType::BF16, {2}, {0.0018310546875 * (1 + 0x1p-7), 3.0517578125e-05 * (1 - 0x1p-8)}};
  EXPECT_TRUE(compare(one_ulp, want, tol).ok);
}

TEST(Compare, ReductionToleranceGrowsWithTheReducedCount) {
  Tolerance base = default_tolerance(DataType::F32);
  Tolerance small = reduction_tolerance(DataType::F32, 1);
  Tolerance big = reduction_tolerance(DataType::F32, 100000);
  EXPECT_EQ(small.atol, base.atol);
  EXPECT_NEAR(big.atol - base.atol, 100000 * 0x1p-24, 1e-12);
  EXPECT_EQ(reduction_tolerance(DataType::I32, 100000).atol, 0.0);  // integers stay exact
}

TEST(Compare, MaxReducedCountOverReductions) {
  ir::Fusion f;
  auto* x = f.make_tensor(DataType::F32, {SizeExpr::symbol("N"), SizeExpr::symbol("K")});
  f.add_input(x);
  auto* rows = ir::sum(x, {1});
  auto* all = ir::sum(x, {});
  f.add_output(rows);
  f.add_output(all);
  EXPECT_EQ(max_reduced_count(f, {{"N", 3}, {"K", 7}}), 21);
  ir::Fusion g;
  auto* y = g.make_tensor(DataType::F32, {SizeExpr::symbol("N")});
  g.add_input(y);
  g.add_output(ir::tv(ir::exp(y)));
  EXPECT_EQ(max_reduced_count(g, {{"N", 3}}), 1);
}

}  // namespace
}  // namespace schedlab::ref
