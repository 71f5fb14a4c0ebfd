// The double-precision meaning of the operators, and rounding to storage types.
#include "schedlab/ir/op_semantics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace schedlab::ir {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double pow2(int e) {
  return std::ldexp(1.0, e);
}

// --- f16 ----------------------------------------------------------------------

TEST(RoundToF16Test, ExactValuesAreKept) {
  for (double v : {0.0, 1.0, -2.5, 0.5, 1024.0, 65504.0, -65504.0})
    EXPECT_EQ(round_to_dtype(v, DataType::F16), v) << v;
}

TEST(RoundToF16Test, RoundsToTenMantissaBits) {
  EXPECT_EQ(round_to_dtype(0.1, DataType::F16), 0.0999755859375);
  EXPECT_EQ(round_to_dtype(3.14159, DataType::F16), 3.140625);
  // Between 2048 and 4096 the spacing is 2.
  EXPECT_EQ(round_to_dtype(2047.0, DataType::F16), 2047.0);
  EXPECT_EQ(round_to_dtype(2050.9, DataType::F16), 2050.0);
}

TEST(RoundToF16Test, TiesGoToEven) {
  // 1 + 2^-11 is halfway between 1 (even mantissa) and 1 + 2^-10 (odd).
  EXPECT_EQ(round_to_dtype(1.0 + pow2(-11), DataType::F16), 1.0);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  EXPECT_EQ(round_to_dtype(1.0 + 3 * pow2(-11), DataType::F16), 1.0 + pow2(-9));
  EXPECT_EQ(round_to_dtype(2049.0, DataType::F16), 2048.0);
  EXPECT_EQ(round_to_dtype(2051.0, DataType::F16), 2052.0);
  EXPECT_EQ(round_to_dtype(-2051.0, DataType::F16), -2052.0);
  // Just above a tie rounds up.
  EXPECT_EQ(round_to_dtype(1.0 + pow2(-11) + pow2(-20), DataType::F16), 1.0 + pow2(-10));
}

TEST(RoundToF16Test, Subnormals) {
  // The smallest subnormal is 2^-24; below 2^-14 the spacing stays 2^-24.
  EXPECT_EQ(round_to_dtype(pow2(-24), DataType::F16), pow2(-24));
  EXPECT_EQ(round_to_dtype(-pow2(-24), DataType::F16), -pow2(-24));
  EXPECT_EQ(round_to_dtype(pow2(-14) + pow2(-24), DataType::F16), pow2(-14) + pow2(-24));
  EXPECT_EQ(round_to_dtype(5 * pow2(-24), DataType::F16), 5 * pow2(-24));
  EXPECT_EQ(round_to_dtype(5.4 * pow2(-24), DataType::F16), 5 * pow2(-24));
  // Half the smallest subnormal is a tie and goes to (even) zero; above it goes up.
  EXPECT_EQ(round_to_dtype(pow2(-25), DataType::F16), 0.0);
  EXPECT_EQ(round_to_dtype(pow2(-25) * 1.01, DataType::F16), pow2(-24));
  EXPECT_EQ(round_to_dtype(3 * pow2(-25), DataType::F16), pow2(-23));
  EXPECT_EQ(round_to_dtype(pow2(-30), DataType::F16), 0.0);
  // Underflow keeps the sign.
  EXPECT_TRUE(std::signbit(round_to_dtype(-pow2(-30), DataType::F16)));
}

TEST(RoundToF16Test, OverflowToInfinity) {
  // 65504 is the largest finite f16; 65520 is the midpoint to the next power
  // of two and rounds (to even) up to infinity.
  EXPECT_EQ(round_to_dtype(65519.0, DataType::F16), 65504.0);
  EXPECT_EQ(round_to_dtype(65519.99, DataType::F16), 65504.0);
  EXPECT_EQ(round_to_dtype(65520.0, DataType::F16), kInf);
  EXPECT_EQ(round_to_dtype(-65520.0, DataType::F16), -kInf);
  EXPECT_EQ(round_to_dtype(1e10, DataType::F16), kInf);
}

TEST(RoundToF16Test, SpecialValues) {
  EXPECT_TRUE(std::isnan(round_to_dtype(kNaN, DataType::F16)));
  EXPECT_EQ(round_to_dtype(kInf, DataType::F16), kInf);
  EXPECT_EQ(round_to_dtype(-kInf, DataType::F16), -kInf);
  EXPECT_TRUE(std::signbit(round_to_dtype(-0.0, DataType::F16)));
}

// --- bf16 ---------------------------------------------------------------------

TEST(RoundToBF16Test, RoundsToSevenMantissaBits) {
  EXPECT_EQ(round_to_dtype(1.0, DataType::BF16), 1.0);
  EXPECT_EQ(round_to_dtype(3.14159, DataType::BF16), 3.140625);
  EXPECT_EQ(round_to_dtype(0.1, DataType::BF16), 0.10009765625);
  // bf16 has f32's range: values far beyond f16's stay finite.
  EXPECT_EQ(round_to_dtype(1e10, DataType::BF16), 9999220736.0);
  EXPECT_EQ(round_to_dtype(pow2(-126), DataType::BF16), pow2(-126));
}

TEST(RoundToBF16Test, TiesGoToEven) {
  EXPECT_EQ(round_to_dtype(1.0 + pow2(-8), DataType::BF16), 1.0);
  EXPECT_EQ(round_to_dtype(1.0 + 3 * pow2(-8), DataType::BF16), 1.0 + pow2(-6));
  EXPECT_EQ(round_to_dtype(-(1.0 + 3 * pow2(-8)), DataType::BF16), -(1.0 + pow2(-6)));
  EXPECT_EQ(round_to_dtype(257.0, DataType::BF16), 256.0);
  EXPECT_EQ(round_to_dtype(259.0, DataType::BF16), 260.0);
}

TEST(RoundToBF16Test, OverflowAndSpecialValues) {
  // The largest f32 rounds past the largest bf16 (0x7F7F) to infinity.
  EXPECT_EQ(round_to_dtype(std::numeric_limits<float>::max(), DataType::BF16), kInf);
  EXPECT_EQ(round_to_dtype(-std::numeric_limits<float>::max(), DataType::BF16), -kInf);
  EXPECT_EQ(round_to_dtype(3.3895313892515355e38, DataType::BF16), 3.3895313892515355e38);
  EXPECT_TRUE(std::isnan(round_to_dtype(kNaN, DataType::BF16)));
  EXPECT_EQ(round_to_dtype(kInf, DataType::BF16), kInf);
}

// --- f32, f64 -------------------------------------------------------------------

TEST(RoundToF32Test, RoundsLikeAFloatConversion) {
  EXPECT_EQ(round_to_dtype(0.1, DataType::F32), static_cast<double>(0.1f));
  EXPECT_NE(round_to_dtype(0.1, DataType::F32), 0.1);
  EXPECT_EQ(round_to_dtype(1.0 + pow2(-24), DataType::F32), 1.0);
  EXPECT_EQ(round_to_dtype(1.0 + 3 * pow2(-24), DataType::F32), 1.0 + pow2(-22));
  EXPECT_EQ(round_to_dtype(1e39, DataType::F32), kInf);
  EXPECT_EQ(round_to_dtype(pow2(-149), DataType::F32), pow2(-149));
  EXPECT_EQ(round_to_dtype(pow2(-151), DataType::F32), 0.0);
  EXPECT_TRUE(std::isnan(round_to_dtype(kNaN, DataType::F32)));
}

TEST(RoundToF64Test, IsIdentity) {
  EXPECT_EQ(round_to_dtype(0.1, DataType::F64), 0.1);
  EXPECT_EQ(round_to_dtype(1e300, DataType::F64), 1e300);
  EXPECT_TRUE(std::isnan(round_to_dtype(kNaN, DataType::F64)));
}

// --- integers, bool ----------------------------------------------------------------

TEST(RoundToIntTest, TruncatesTowardZero) {
  EXPECT_EQ(round_to_dtype(2.7, DataType::I32), 2.0);
  EXPECT_EQ(round_to_dtype(-2.7, DataType::I32), -2.0);
  EXPECT_EQ(round_to_dtype(0.999, DataType::I32), 0.0);
  EXPECT_EQ(round_to_dtype(-0.5, DataType::I64), 0.0);
  EXPECT_EQ(round_to_dtype(7.0, DataType::I64), 7.0);
}

TEST(RoundToIntTest, I32Saturates) {
  EXPECT_EQ(round_to_dtype(3e9, DataType::I32), 2147483647.0);
  EXPECT_EQ(round_to_dtype(-3e9, DataType::I32), -2147483648.0);
  EXPECT_EQ(round_to_dtype(2147483647.9, DataType::I32), 2147483647.0);
  EXPECT_EQ(round_to_dtype(-2147483648.9, DataType::I32), -2147483648.0);
  EXPECT_EQ(round_to_dtype(kInf, DataType::I32), 2147483647.0);
  EXPECT_EQ(round_to_dtype(-kInf, DataType::I32), -2147483648.0);
}

TEST(RoundToIntTest, I64KeepsValuesBeyondI32) {
  EXPECT_EQ(round_to_dtype(3e9 + 0.5, DataType::I64), 3e9);
  EXPECT_EQ(round_to_dtype(-pow2(53), DataType::I64), -pow2(53));
}

TEST(RoundToIntTest, I64Saturates) {
  EXPECT_EQ(round_to_dtype(kInf, DataType::I64), pow2(63) - 1024);  // nearest double below 2^63
  EXPECT_EQ(round_to_dtype(1e30, DataType::I64), pow2(63) - 1024);
  EXPECT_EQ(round_to_dtype(-kInf, DataType::I64), -pow2(63));
}

TEST(RoundToIntTest, NaNBecomesZero) {
  EXPECT_EQ(round_to_dtype(kNaN, DataType::I32), 0.0);
  EXPECT_EQ(round_to_dtype(kNaN, DataType::I64), 0.0);
}

TEST(RoundToBoolTest, NonZeroIsTrue) {
  EXPECT_EQ(round_to_dtype(0.0, DataType::Bool), 0.0);
  EXPECT_EQ(round_to_dtype(-0.0, DataType::Bool), 0.0);
  EXPECT_EQ(round_to_dtype(0.5, DataType::Bool), 1.0);
  EXPECT_EQ(round_to_dtype(-3.0, DataType::Bool), 1.0);
  EXPECT_EQ(round_to_dtype(kInf, DataType::Bool), 1.0);
  // As in C++ and CUDA, NaN converts to true.
  EXPECT_EQ(round_to_dtype(kNaN, DataType::Bool), 1.0);
}

// --- operators -----------------------------------------------------------------------

TEST(OpSemanticsTest, MaximumAndMinimumPropagateNaN) {
  for (BinaryOpType op : {BinaryOpType::Max, BinaryOpType::Min}) {
    EXPECT_TRUE(std::isnan(apply_binary(op, kNaN, 1.0))) << binary_op_name(op);
    EXPECT_TRUE(std::isnan(apply_binary(op, 1.0, kNaN))) << binary_op_name(op);
    EXPECT_TRUE(std::isnan(apply_binary(op, kNaN, kNaN))) << binary_op_name(op);
    EXPECT_TRUE(std::isnan(apply_binary(op, -kInf, kNaN))) << binary_op_name(op);
  }
  EXPECT_EQ(apply_binary(BinaryOpType::Max, 1.0, 2.0), 2.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Min, 1.0, 2.0), 1.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Max, -kInf, -3.0), -3.0);
}

/// Folds xs with op from the reduction's identity, as the reference does.
double fold(ReductionOpType op, const std::vector<double>& xs) {
  double acc = reduction_init(op);
  for (double x : xs) acc = apply_reduction(op, acc, x);
  return acc;
}

TEST(OpSemanticsTest, MaxAndMinReductionsPropagateNaN) {
  // Wherever the NaN sits, it survives: a NaN-ignoring fmax would lose it
  // when it is followed by larger values.
  for (ReductionOpType op : {ReductionOpType::Max, ReductionOpType::Min}) {
    EXPECT_TRUE(std::isnan(fold(op, {kNaN, 1.0, 2.0}))) << reduction_op_name(op);
    EXPECT_TRUE(std::isnan(fold(op, {1.0, kNaN, 3.0}))) << reduction_op_name(op);
    EXPECT_TRUE(std::isnan(fold(op, {1.0, 2.0, kNaN}))) << reduction_op_name(op);
  }
  EXPECT_EQ(fold(ReductionOpType::Max, {1.0, 5.0, -2.0}), 5.0);
  EXPECT_EQ(fold(ReductionOpType::Min, {1.0, 5.0, -2.0}), -2.0);
  EXPECT_TRUE(std::isnan(fold(ReductionOpType::Sum, {1.0, kNaN})));
}

TEST(OpSemanticsTest, ReductionIdentities) {
  EXPECT_EQ(reduction_init(ReductionOpType::Sum), 0.0);
  EXPECT_EQ(reduction_init(ReductionOpType::Prod), 1.0);
  EXPECT_EQ(reduction_init(ReductionOpType::Max), -kInf);
  EXPECT_EQ(reduction_init(ReductionOpType::Min), kInf);
  EXPECT_EQ(fold(ReductionOpType::Max, {}), -kInf);
  EXPECT_EQ(fold(ReductionOpType::Prod, {2.0, 3.0, 4.0}), 24.0);
  EXPECT_EQ(fold(ReductionOpType::Sum, {2.0, 3.0, 4.0}), 9.0);
}

TEST(OpSemanticsTest, Unary) {
  EXPECT_EQ(apply_unary(UnaryOpType::Neg, 2.0), -2.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Abs, -2.0), 2.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Exp, 0.0), 1.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Log, 1.0), 0.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Sqrt, 9.0), 3.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Rsqrt, 4.0), 0.5);
  EXPECT_EQ(apply_unary(UnaryOpType::Sigmoid, 0.0), 0.5);
  EXPECT_EQ(apply_unary(UnaryOpType::Reciprocal, 4.0), 0.25);
  EXPECT_EQ(apply_unary(UnaryOpType::Relu, -1.0), 0.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Relu, 1.5), 1.5);
  EXPECT_TRUE(std::isnan(apply_unary(UnaryOpType::Relu, kNaN)));
  EXPECT_EQ(apply_unary(UnaryOpType::Not, 0.0), 1.0);
  EXPECT_EQ(apply_unary(UnaryOpType::Not, 1.0), 0.0);
  EXPECT_NEAR(apply_unary(UnaryOpType::Erf, 1.0), 0.8427007929497149, 1e-15);
  EXPECT_NEAR(apply_unary(UnaryOpType::Tanh, 1.0), 0.7615941559557649, 1e-15);
}

TEST(OpSemanticsTest, Binary) {
  EXPECT_EQ(apply_binary(BinaryOpType::Add, 1.0, 2.0), 3.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Sub, 1.0, 2.0), -1.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Mul, 3.0, 2.0), 6.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Div, 1.0, 4.0), 0.25);
  EXPECT_EQ(apply_binary(BinaryOpType::Pow, 2.0, 10.0), 1024.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Lt, 1.0, 2.0), 1.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Le, 2.0, 2.0), 1.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Gt, 1.0, 2.0), 0.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Ge, 1.0, 2.0), 0.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Eq, 2.0, 2.0), 1.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Ne, 2.0, 2.0), 0.0);
  // Every comparison with NaN is false except !=.
  EXPECT_EQ(apply_binary(BinaryOpType::Eq, kNaN, kNaN), 0.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Ne, kNaN, kNaN), 1.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Lt, kNaN, 1.0), 0.0);
  EXPECT_EQ(apply_binary(BinaryOpType::And, 1.0, 0.0), 0.0);
  EXPECT_EQ(apply_binary(BinaryOpType::Or, 1.0, 0.0), 1.0);
}

}  // namespace
}  // namespace schedlab::ir
