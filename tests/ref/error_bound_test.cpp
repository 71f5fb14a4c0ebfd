// The reference's forward error bounds (core/ref/error_bound.h): an
// ill-conditioned result computed correctly in f32 lies within them, a wrong
// one does not, and a comparison whose operands' intervals straddle its
// threshold may flip.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/ref/compare.h"
#include "schedlab/ref/evaluator.h"

namespace schedlab::ref {
namespace {

using ir::DataType;

HostTensor input(DataType t, std::vector<int64_t> shape, std::vector<double> data) {
  return HostTensor{t, std::move(shape), std::move(data)};
}

// Fuzz seed 1 case 4196, reduced: a sum of three f32 values that nearly
// cancel, then sqrt(sqrt(|.|)). Summed in f32 in another order the result
// differs from the reference by more than rtol 1e-5, yet it is right.
constexpr const char* kCancel = R"(fusion: cancel
inputs:
  x: {dtype: f32, shape: [N]}
sizes: {N: 3}
body: |
  s = sum(x, axis=0)
  r = sqrt(abs(sqrt(abs(s))))
outputs: [r]
)";

TEST(ErrorBound, CancellingSumThenRootsIsWithinTheBound) {
  auto def = frontend::parse_fusion_text(kCancel, "cancel.yaml");
  const ir::SizeBindings sizes{{"N", 3}};
  std::vector<double> xs;  // f32 values, as generated inputs are
  for (double v : {0.8257964849472046, -0.8257387280464172, -8.122808026200801e-07})
    xs.push_back(static_cast<float>(v));
  auto want = evaluate(*def.fusion, {input(DataType::F32, {3}, xs)}, sizes);
  ASSERT_EQ(want[0].error.size(), 1u);
  // A kernel's f32 sum in the other order.
  const float s = (static_cast<float>(xs[2]) + static_cast<float>(xs[1])) + static_cast<float>(xs[0]);
  const double kernel = std::sqrt(std::fabs(std::sqrt(std::fabs(static_cast<double>(s)))));
  HostTensor got{DataType::F32, {}, {kernel}};
  const double err = std::fabs(kernel - want[0].data[0]);
  const Tolerance strict = Tolerance::user(1e-5, 1e-6);
  ASSERT_GT(err, strict.allowed(want[0].data[0], 0)) << "the case must need the bound";
  EXPECT_LE(err, 2 * want[0].error[0]);
  EXPECT_TRUE(compare(got, want[0], Tolerance::error_bound(DataType::F32)).ok);
  // A tolerance the user gave is the whole tolerance.
  EXPECT_FALSE(compare(got, want[0], strict).ok);
}

TEST(ErrorBound, AWrongValueIsStillWrong) {
  auto def = frontend::parse_fusion_text(kCancel, "cancel.yaml");
  const ir::SizeBindings sizes{{"N", 3}};
  auto want = evaluate(*def.fusion, {input(DataType::F32, {3}, {0.5, 0.25, -0.125})}, sizes);
  // Well conditioned: the bound is a few ulps.
  EXPECT_LT(want[0].error[0], 1e-6);
  HostTensor got{DataType::F32, {}, {want[0].data[0] * 1.001}};
  Comparison c = compare(got, want[0], Tolerance::error_bound(DataType::F32));
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.first_mismatch, ::testing::HasSubstr("x error bound"));
}

constexpr const char* kThreshold = R"(fusion: threshold
inputs:
  x: {dtype: f32, shape: [N]}
sizes: {N: 2}
body: |
  s = sum(x, axis=0)
  r = where(s < 0.5, 1.0, 3.0)
outputs: [r]
)";

TEST(ErrorBound, AComparisonNearItsThresholdMayFlip) {
  auto def = frontend::parse_fusion_text(kThreshold, "threshold.yaml");
  const ir::SizeBindings sizes{{"N", 2}};
  // 0.25 + 0.25 is exactly 0.5, but a sum's bound straddles it: either branch is right.
  auto near = evaluate(*def.fusion, {input(DataType::F32, {2}, {0.25, 0.25})}, sizes);
  EXPECT_EQ(near[0].data[0], 3.0);
  EXPECT_GE(kBoundFactor * near[0].error[0], 2.0);  // bounds are in units of C
  // Far from it: no doubt.
  auto far = evaluate(*def.fusion, {input(DataType::F32, {2}, {0.5, 0.25})}, sizes);
  EXPECT_EQ(far[0].error[0], 0.0);
}

TEST(ErrorBound, InputsAreExactAndMaxIsExact) {
  auto def = frontend::parse_fusion_text(R"(fusion: m
inputs:
  x: {dtype: f32, shape: [N]}
sizes: {N: 4}
body: |
  m = max(x, axis=0)
outputs: [m]
)",
                                         "m.yaml");
  auto want =
      evaluate(*def.fusion, {input(DataType::F32, {4}, {0.5, -2, 3, 1})}, {{"N", 4}});
  EXPECT_EQ(want[0].data[0], 3.0);
  EXPECT_EQ(want[0].error[0], 0.0);
}

// Fast math (EvalOptions::fast_math, runtime::KernelOptions::fast_math): the
// bounds of the hardware approximations, for f32 only.
constexpr const char* kFastOps = R"(fusion: fast
inputs:
  x: {dtype: f32, shape: [N]}
  b: {dtype: f32, shape: [N]}
  d: {dtype: f64, shape: [N]}
sizes: {N: 1}
body: |
  e = exp(x)
  q = x / b
  l = log(x)
  t = tanh(x)
  de = exp(d)
outputs: [e, q, l, t, de]
)";

std::vector<HostTensor> fast_ops(double x, double b, bool fast) {
  auto def = frontend::parse_fusion_text(kFastOps, "fast.yaml");
  return evaluate(*def.fusion,
                  {input(DataType::F32, {1}, {x}), input(DataType::F32, {1}, {b}),
                   input(DataType::F64, {1}, {x})},
                  {{"N", 1}}, EvalOptions{fast});
}

TEST(ErrorBound, FastExpGrowsWithTheArgument) {
  const double u = 0x1p-24, x = 60.0;
  const auto accurate = fast_ops(x, 1.0, false), fast = fast_ops(x, 1.0, true);
  const double r = std::exp(x);
  EXPECT_NEAR(accurate[0].error[0], 4 * u * r, 1e-6 * r * u);
  // __expf: 2 + floor(|1.173 x|) ulps.
  EXPECT_NEAR(fast[0].error[0], (2 + std::floor(1.173 * x)) * u * r, 1e-6 * r * u);
  // Unchanged: tanh (accurate either way) and f64 math.
  // (-ftz adds f32's smallest normal to every fast-math f32 bound.)
  EXPECT_NEAR(fast[3].error[0], accurate[3].error[0], 0x1p-125);
  EXPECT_EQ(fast[4].error[0], accurate[4].error[0]);
}

TEST(ErrorBound, FastDivisionByAHugeDivisorMayBeZero) {
  // __fdividef(a, b) returns 0 for 2^126 < |b| < 2^128: the whole quotient
  // is within the bound; in range it is 2 ulps.
  const auto huge = fast_ops(0.75, 0x1p127, true);
  EXPECT_GE(huge[1].error[0], std::fabs(huge[1].data[0]));
  EXPECT_LT(fast_ops(0.75, 0x1p127, false)[1].error[0], std::fabs(huge[1].data[0]) * 1e-6);
  const auto in_range = fast_ops(0.75, 3.0, true);
  EXPECT_NEAR(in_range[1].error[0], 2 * 0x1p-24 * 0.25, 1e-15);
  // A subnormal divisor: no bound at all.
  EXPECT_TRUE(std::isinf(fast_ops(0.75, 0x1p-130, true)[1].error[0]));
}

TEST(ErrorBound, FastLogIsAbsoluteNearOne) {
  // __logf: 2^-21.41 absolute on [0.5, 2], where log x is near 0.
  const auto near_one = fast_ops(1.0 + 0x1p-20, 1.0, true);
  EXPECT_NEAR(near_one[2].error[0], std::exp2(-21.41), 1e-12);
  EXPECT_LT(fast_ops(1.0 + 0x1p-20, 1.0, false)[2].error[0], 1e-12);
  const auto far = fast_ops(100.0, 1.0, true);
  EXPECT_NEAR(far[2].error[0], 3 * 0x1p-24 * std::log(100.0), 1e-12);
}

TEST(ErrorBound, AWrongValueIsWrongWithFastMathToo) {
  // The bounds widen by ulps, not by enough to hide a wrong kernel.
  const auto fast = fast_ops(2.0, 3.0, true);
  HostTensor got{DataType::F32, {1}, {fast[0].data[0] * 1.001}};
  EXPECT_FALSE(compare(got, fast[0], Tolerance::error_bound(DataType::F32)).ok);
}

// Fuzz seed 7 case 114 (`fuzz --cases 600 --seed 7 --mutate one:0.01`),
// reduced: under fast math relu(x) at 0 carries f32's smallest normal (-ftz),
// so sqrt(abs(.)) saw an operand interval reaching below 0; sqrt is NaN there
// and the bound was infinite, carried through min into every later value, and
// an output moved by 1 % of its largest value passed. A correct kernel's sqrt
// operand is abs(.) >= 0: the bound takes the in-domain part of the interval.
constexpr const char* kRootAtZero = R"(fusion: root_at_zero
inputs:
  x: {dtype: f32, shape: [N]}
  y: {dtype: f32, shape: [N]}
sizes: {N: 2}
body: |
  r = sqrt(abs(relu(x)))
  m = min(r, y)
  out = log(abs(m * m) + 1)
outputs: [out]
)";

TEST(ErrorBound, ARootAtZeroUnderFastMathHasAFiniteBound) {
  auto def = frontend::parse_fusion_text(kRootAtZero, "root.yaml");
  const std::vector<HostTensor> in = {input(DataType::F32, {2}, {-0.5, 0.0}),
                                      input(DataType::F32, {2}, {-0.75, 0.25})};
  for (bool fast : {false, true}) {
    auto want = evaluate(*def.fusion, in, {{"N", 2}}, EvalOptions{fast});
    for (double e : want[0].error) EXPECT_TRUE(std::isfinite(e)) << "fast math " << fast;
    // min(0, -0.75) = -0.75: log(1.5625); moved by 1 % it is wrong.
    HostTensor got{DataType::F32, {2}, want[0].data};
    got.data[0] += 0.01 * std::fabs(want[0].data[0]);
    EXPECT_FALSE(compare(got, want[0], Tolerance::error_bound(DataType::F32)).ok)
        << "fast math " << fast;
  }
}

// sqrt at 0 with an interval reaching below 0: the in-domain side bounds it.
TEST(ErrorBound, OnlyTheInDomainPartOfTheIntervalBoundsTheResult) {
  auto def = frontend::parse_fusion_text(R"(fusion: root
inputs:
  x: {dtype: f32, shape: [N]}
sizes: {N: 1}
body: |
  r = sqrt(relu(x))
outputs: [r]
)",
                                         "root.yaml");
  auto want = evaluate(*def.fusion, {input(DataType::F32, {1}, {-0.5})}, {{"N", 1}},
                       EvalOptions{true});
  // relu's -ftz bound is f32's smallest normal m: sqrt changes by sqrt(2 m)
  // over [0, 2 m] (C = 2 times the bound), so its bound is sqrt(2 m) / 2, plus
  // its own -ftz rounding m.
  const double m = 0x1p-126;
  EXPECT_NEAR(want[0].error[0], std::sqrt(2 * m) / 2 + m, 1e-30);
}

}  // namespace
}  // namespace schedlab::ref
