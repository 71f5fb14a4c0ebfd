// Validation tolerances and comparison of kernel outputs with the reference.
#include "schedlab/ref/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>


namespace schedlab::ref {
namespace {

using ir::DataType;

HostTensor tensor(std::vector<int64_t> shape, std::vector<double> data) {
  return {DataType::F32, std::move(shape), std::move(data)};
}

TEST(Compare, WithinAndOutsideTolerance) {
  auto want = tensor({2, 2}, {1.0, 2.0, 3.0, 4.0});
  EXPECT_TRUE(
      compare(tensor({2, 2}, {1.0, 2.0, 3.0, 4.00001}), want, Tolerance::user(1e-5, 0.0)).ok);
  auto c = compare(tensor({2, 2}, {1.0, 2.0, 3.5, 4.0}), want, Tolerance::user(1e-5, 1e-6));
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

// The default criterion: C x the reference's bound + the dtype's floor.
TEST(Compare, DefaultFollowsTheErrorBound) {
  HostTensor want = tensor({3}, {1e-5, 2e-5, 0.5});
  want.error = {1e-12, 0.0, 1e-8};
  const Tolerance tol = Tolerance::error_bound(DataType::F32);
  EXPECT_EQ(tol.mode(), Tolerance::Mode::ErrorBound);
  EXPECT_EQ(tol.factor(), kBoundFactor);
  EXPECT_EQ(tol.floor(), 0x1p-126);
  EXPECT_TRUE(compare(tensor({3}, {1e-5 + 1.9e-12, 2e-5, 0.5 - 1.9e-8}), want, tol).ok);
  // Small outputs are checked to their own scale: no constant swallows them.
  Comparison c = compare(tensor({3}, {1e-5 + 3e-12, 2e-5, 0.5}), want, tol);
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.first_mismatch,
              ::testing::HasSubstr("element 0 [0]: got 1.0000003e-05, expected 1e-05, allowed "
                                   "2e-12 (2 x error bound 1e-12 + floor 1.18e-38)"));
  EXPECT_FALSE(compare(tensor({3}, {0, 0, 0}), want, tol).ok);
  // An exact element (bound 0) must match to the floor.
  EXPECT_FALSE(compare(tensor({3}, {1e-5, 2e-5 * (1 + 0x1p-23), 0.5}), want, tol).ok);
  EXPECT_TRUE(compare(tensor({3}, {1e-5, 2e-5 + 1e-39, 0.5}), want, tol).ok);
}

TEST(Compare, ReportsTheLargestRatioToTheAllowance) {
  HostTensor want = tensor({2}, {1.0, 2.0});
  want.error = {1e-7, 1e-7};
  const Tolerance tol = Tolerance::error_bound(2.0, 0.0);
  Comparison c = compare(tensor({2}, {1.0 + 5e-8, 2.0 - 1.5e-7}), want, tol);
  EXPECT_TRUE(c.ok);
  EXPECT_NEAR(c.max_ratio, 0.75, 1e-6);
  EXPECT_THAT(c.max_ratio_at, ::testing::HasSubstr("element 1 [1]: error 1.5e-07, allowed 2e-07"));
  EXPECT_EQ(compare(want, want, tol).max_ratio, 0.0);
  // Where nothing is allowed, any error is infinitely far.
  HostTensor exact = tensor({1}, {3.0});
  EXPECT_TRUE(std::isinf(compare(tensor({1}, {3.5}), exact, tol).max_ratio));
}

// A tolerance the user gives is the whole tolerance: the bound plays no part.
TEST(Compare, UserToleranceIsTheWholeTolerance) {
  HostTensor want = tensor({1}, {1.0});
  want.error = {0.1};
  const Tolerance user = Tolerance::user(1e-3, 0.0);
  EXPECT_TRUE(user.is_user());
  EXPECT_EQ(user.describe(), "rtol 0.001, atol 0");
  EXPECT_FALSE(compare(tensor({1}, {1.01}), want, user).ok);  // within 2 x bound, outside rtol
  EXPECT_TRUE(compare(tensor({1}, {1.01}), want, Tolerance::error_bound(DataType::F32)).ok);
  Comparison c = compare(tensor({1}, {1.01}), want, user);
  EXPECT_THAT(c.first_mismatch,
              ::testing::HasSubstr("allowed 0.001 (atol 0 + rtol 0.001 x |expected|)"));
  EXPECT_TRUE(compare(tensor({1}, {1.0005}), want, user).ok);
  EXPECT_TRUE(compare(tensor({1}, {1.5}), want, Tolerance::user(0, 0.5)).ok);
}

TEST(Compare, FloorPerDtype) {
  EXPECT_EQ(error_floor(DataType::F32), 0x1p-126);
  EXPECT_EQ(error_floor(DataType::BF16), 0x1p-126);
  EXPECT_EQ(error_floor(DataType::F64), 0x1p-1022);
  EXPECT_EQ(error_floor(DataType::F16), 0x1p-24);  // the smallest subnormal, not 6.1e-5
  EXPECT_EQ(error_floor(DataType::I32), 0.0);
  EXPECT_EQ(error_floor(DataType::Bool), 0.0);
  EXPECT_EQ(Tolerance::error_bound(DataType::F32).describe(), "2 x error bound + 1.18e-38");
}

}  // namespace
}  // namespace schedlab::ref
