// The reference evaluator against hand-computed values, its input generator
// against pinned SplitMix64 draws, and every user error it raises.
#include "schedlab/ref/evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "schedlab/base/error.h"
#include "schedlab/ir/arith.h"
#include "schedlab/ir/op_semantics.h"
#include "test_support.h"

namespace schedlab::ref {
namespace {

using ir::DataType;
using ir::SizeExpr;
using test_support::user_error_of;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

SizeExpr c(int64_t v) {
  return SizeExpr::constant(v);
}
SizeExpr sym(const char* n) {
  return SizeExpr::symbol(n);
}

ir::TensorView* input(ir::Fusion& f, DataType t, const std::vector<SizeExpr>& shape,
                      const char* name) {
  ir::TensorView* tv = f.make_tensor(t, shape);
  tv->set_user_name(name);
  f.add_input(tv);
  return tv;
}

HostTensor host(DataType t, std::vector<int64_t> shape, std::vector<double> data) {
  return HostTensor{t, std::move(shape), std::move(data)};
}

// --- Elementwise -----------------------------------------------------------

TEST(RefEvaluator, AddBroadcastsLowerRankOperand) {
  ir::Fusion f;
  auto* x = input(f, DataType::F32, {c(2), c(3)}, "x");
  auto* y = input(f, DataType::F32, {c(3)}, "y");
  f.add_output(ir::tv(ir::add(x, y)));
  auto out = evaluate(
      f, {host(DataType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}), host(DataType::F32, {3}, {10, 20, 30})},
      {});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DataType::F32);
  EXPECT_THAT(out[0].shape, ElementsAre(2, 3));
  EXPECT_THAT(out[0].data, ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST(RefEvaluator, ExtentOneAxesStretchOnBothSides) {
  // [2, 1] * [1, 3] -> [2, 3]: an outer product.
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(1)}, "x");
  auto* y = input(f, DataType::F64, {c(1), c(3)}, "y");
  f.add_output(ir::tv(ir::mul(x, y)));
  auto out = evaluate(
      f, {host(DataType::F64, {2, 1}, {2, 3}), host(DataType::F64, {1, 3}, {1, 10, 100})}, {});
  EXPECT_THAT(out[0].shape, ElementsAre(2, 3));
  EXPECT_THAT(out[0].data, ElementsAre(2, 20, 200, 3, 30, 300));
}

TEST(RefEvaluator, ScalarOperandsAreConstants) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(3)}, "x");
  // 1 - 2 * x: the constant is on either side.
  f.add_output(ir::tv(ir::sub(ir::constant(f, 1.0), ir::mul(x, ir::constant(f, 2.0)))));
  auto out = evaluate(f, {host(DataType::F64, {3}, {0.5, -1, 4})}, {});
  EXPECT_THAT(out[0].data, ElementsAre(0, 3, -7));
}

TEST(RefEvaluator, UnaryChainOnF32CastOfHalfInputComputesInDouble) {
  // After an explicit cast to f32 the reference does not round intermediates.
  ir::Fusion f;
  auto* x = input(f, DataType::F16, {c(3)}, "x");
  f.add_output(ir::tv(ir::exp(ir::relu(ir::cast(x, DataType::F32)))));
  auto out = evaluate(f, {host(DataType::F16, {3}, {-1, 0, 0.5})}, {});
  EXPECT_EQ(out[0].dtype, DataType::F32);
  EXPECT_THAT(out[0].data, ElementsAre(1.0, 1.0, std::exp(0.5)));
}

TEST(RefEvaluator, HalfMathRoundsAfterEveryOp) {
  // exp of an f16 is f16 (PyTorch): computed in f32, rounded back.
  ir::Fusion f;
  auto* x = input(f, DataType::F16, {c(3)}, "x");
  f.add_output(ir::tv(ir::exp(ir::relu(x))));
  // y * y + y on f16: the product rounds to f16 before the sum (a half op
  // each): for y = 0.10699462890625 that gives 0.118408203125, one rounding
  // of the exact y * y + y would give 0.11846923828125.
  auto* y = input(f, DataType::F16, {c(1)}, "y");
  f.add_output(ir::tv(ir::add(ir::mul(y, y), y)));
  auto out = evaluate(f, {host(DataType::F16, {3}, {-1, 0, 0.5}), host(DataType::F16, {1}, {0.10699462890625})}, {});
  EXPECT_EQ(out[0].dtype, DataType::F16);
  EXPECT_THAT(out[0].data, ElementsAre(1.0, 1.0, ir::round_to_dtype(std::exp(0.5), DataType::F16)));
  const double h = 0.10699462890625;
  const double sq = ir::round_to_dtype(h * h, DataType::F16);
  EXPECT_EQ(out[1].dtype, DataType::F16);
  EXPECT_EQ(out[1].data[0], ir::round_to_dtype(sq + h, DataType::F16));
  EXPECT_EQ(out[1].data[0], 0.118408203125);
}

TEST(RefEvaluator, ComparisonGivesBoolAndWhereSelects) {
  ir::Fusion f;
  auto* x = input(f, DataType::F32, {c(4)}, "x");
  auto* y = input(f, DataType::F32, {c(4)}, "y");
  ir::Val* gt = ir::binary(ir::BinaryOpType::Gt, x, y);
  f.add_output(ir::tv(gt));
  f.add_output(ir::tv(ir::where(gt, x, ir::constant(f, -1.0))));
  auto out = evaluate(
      f, {host(DataType::F32, {4}, {1, 5, 3, 0}), host(DataType::F32, {4}, {2, 4, 3, -1})}, {});
  EXPECT_EQ(out[0].dtype, DataType::Bool);
  EXPECT_THAT(out[0].data, ElementsAre(0, 1, 0, 1));
  EXPECT_THAT(out[1].data, ElementsAre(-1, 5, -1, 0));
}

TEST(RefEvaluator, IntegerDivisionIsTrueDivision) {
  ir::Fusion f;
  auto* x = input(f, DataType::I32, {c(2)}, "x");
  f.add_output(ir::tv(ir::div(x, ir::constant(f, 2, DataType::I32))));
  auto out = evaluate(f, {host(DataType::I32, {2}, {7, -3})}, {});
  EXPECT_EQ(out[0].dtype, DataType::F32);
  EXPECT_THAT(out[0].data, ElementsAre(3.5, -1.5));
}

TEST(RefEvaluator, CastRoundsToTargetDtype) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(3)}, "x");
  for (DataType t : {DataType::F16, DataType::BF16, DataType::F32, DataType::I32, DataType::Bool})
    f.add_output(ir::tv(ir::cast(x, t)));
  auto out = evaluate(f, {host(DataType::F64, {3}, {1.0 / 3.0, -2.7, 0.0})}, {});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].dtype, DataType::F16);
  EXPECT_THAT(out[0].data, ElementsAre(0.333251953125, -2.69921875, 0.0));
  EXPECT_THAT(out[1].data, ElementsAre(0.333984375, -2.703125, 0.0));
  EXPECT_THAT(out[2].data,
              ElementsAre(static_cast<double>(1.0f / 3.0f), static_cast<double>(-2.7f), 0.0));
  EXPECT_THAT(out[3].data, ElementsAre(0, -2, 0));  // truncates toward zero
  EXPECT_THAT(out[4].data, ElementsAre(1, 1, 0));
}

TEST(RefEvaluator, SetCopies) {
  ir::Fusion f;
  auto* x = input(f, DataType::BF16, {c(2)}, "x");
  f.add_output(ir::set(x));
  auto out = evaluate(f, {host(DataType::BF16, {2}, {1.5, -2})}, {});
  EXPECT_EQ(out[0].dtype, DataType::BF16);
  EXPECT_THAT(out[0].data, ElementsAre(1.5, -2));
}

// --- Reductions ------------------------------------------------------------

TEST(RefEvaluator, SumDropsReducedAxisAndKeepdimBroadcastsBack) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(3)}, "x");
  ir::TensorView* s = ir::sum(x, {1});
  ir::TensorView* sk = ir::sum(x, {-1}, /*keepdim=*/true);
  f.add_output(s);
  f.add_output(sk);
  f.add_output(ir::tv(ir::sub(x, sk)));
  auto out = evaluate(f, {host(DataType::F64, {2, 3}, {1, 2, 3, 4, 5, 6})}, {});
  EXPECT_THAT(out[0].shape, ElementsAre(2));
  EXPECT_THAT(out[0].data, ElementsAre(6, 15));
  EXPECT_THAT(out[1].shape, ElementsAre(2, 1));
  EXPECT_THAT(out[1].data, ElementsAre(6, 15));
  EXPECT_THAT(out[2].data, ElementsAre(-5, -4, -3, -11, -10, -9));
}

TEST(RefEvaluator, ColumnMaxKeepdim) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(3)}, "x");
  f.add_output(ir::max(x, {0}, /*keepdim=*/true));
  auto out = evaluate(f, {host(DataType::F64, {2, 3}, {1, 8, -3, 4, 5, -6})}, {});
  EXPECT_THAT(out[0].shape, ElementsAre(1, 3));
  EXPECT_THAT(out[0].data, ElementsAre(4, 8, -3));
}

TEST(RefEvaluator, MultiAxisReductionKeepsMiddleAxis) {
  // x[i, j, k] = 100 i + 10 j + k over [2, 3, 2]; sum over i and k.
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(3), c(2)}, "x");
  f.add_output(ir::sum(x, {0, 2}));
  std::vector<double> data;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) data.push_back(100 * i + 10 * j + k);
  auto out = evaluate(f, {host(DataType::F64, {2, 3, 2}, data)}, {});
  EXPECT_THAT(out[0].shape, ElementsAre(3));
  // sum_i sum_k = 2*(0+100) + 4*10j + 2*(0+1)
  EXPECT_THAT(out[0].data, ElementsAre(202, 242, 282));
}

TEST(RefEvaluator, ReduceAllAxesGivesRankZero) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(2)}, "x");
  f.add_output(ir::sum(x, {}));
  auto out = evaluate(f, {host(DataType::F64, {2, 2}, {1, 2, 3, 4})}, {});
  EXPECT_TRUE(out[0].shape.empty());
  EXPECT_EQ(out[0].numel(), 1);
  EXPECT_THAT(out[0].data, ElementsAre(10));
}

TEST(RefEvaluator, ProdAndMin) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(3)}, "x");
  f.add_output(ir::reduce(ir::ReductionOpType::Prod, x, {1}));
  f.add_output(ir::reduce(ir::ReductionOpType::Min, x, {0}));
  auto out = evaluate(f, {host(DataType::F64, {2, 3}, {1, -2, 3, 0.5, 4, -1})}, {});
  EXPECT_THAT(out[0].data, ElementsAre(-6, -2));
  EXPECT_THAT(out[1].data, ElementsAre(0.5, -2, -1));
}

TEST(RefEvaluator, MaxPropagatesNaN) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  ir::Fusion f;
  auto* x = input(f, DataType::F32, {c(2), c(3)}, "x");
  f.add_output(ir::max(x, {1}));
  // NaN first, last, and absent: the reduction must not drop it wherever it is.
  auto out = evaluate(f, {host(DataType::F32, {2, 3}, {nan, 1, 2, 3, 4, nan})}, {});
  EXPECT_TRUE(std::isnan(out[0].data[0]));
  EXPECT_TRUE(std::isnan(out[0].data[1]));
  auto ok = evaluate(f, {host(DataType::F32, {2, 3}, {-5, -1, -2, 3, 4, 0})}, {});
  EXPECT_THAT(ok[0].data, ElementsAre(-1, 4));
}

// --- Permute ---------------------------------------------------------------

TEST(RefEvaluator, PermuteThreeD) {
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(2), c(3), c(4)}, "x");
  f.add_output(ir::permute(x, {2, 0, 1}));
  std::vector<double> data;
  for (int v = 0; v < 24; ++v) data.push_back(v);
  auto out = evaluate(f, {host(DataType::F64, {2, 3, 4}, data)}, {});
  ASSERT_THAT(out[0].shape, ElementsAre(4, 2, 3));
  // out[k, i, j] = x[i, j, k] = 12 i + 4 j + k.
  for (int k = 0; k < 4; ++k)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(out[0].data[static_cast<size_t>(6 * k + 3 * i + j)], 12 * i + 4 * j + k)
            << "at [" << k << ", " << i << ", " << j << "]";
}

TEST(RefEvaluator, TransposeFeedsBroadcastAdd) {
  // transpose([2, 3]) + [2] broadcasts along the new last axis' partner.
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {sym("M"), sym("N")}, "x");
  auto* y = input(f, DataType::F64, {sym("M")}, "y");
  f.add_output(ir::tv(ir::add(ir::transpose(x, 0, 1), y)));
  auto out =
      evaluate(f, {host(DataType::F64, {2, 2}, {1, 2, 3, 4}), host(DataType::F64, {2}, {10, 20})},
               {{"M", 2}, {"N", 2}});
  EXPECT_THAT(out[0].data, ElementsAre(11, 23, 12, 24));
}

TEST(RefEvaluator, SymbolicSizesAreBound) {
  ir::Fusion f;
  auto* x = input(f, DataType::F32, {sym("N"), sym("K")}, "x");
  f.add_output(ir::sum(x, {1}));
  auto ins = make_inputs(f, {{"N", 3}, {"K", 5}}, 7);
  auto out = evaluate(f, ins, {{"N", 3}, {"K", 5}});
  ASSERT_THAT(out[0].shape, ElementsAre(3));
  for (int n = 0; n < 3; ++n) {
    double want = 0;
    for (int k = 0; k < 5; ++k) want += ins[0].data[static_cast<size_t>(5 * n + k)];
    EXPECT_EQ(out[0].data[static_cast<size_t>(n)], want);
  }
}

/// sum_k f(a[m, k] * b[k, n]) (f: exp or none), with the product also a
/// fusion output when `keep`.
std::vector<HostTensor> contraction(bool keep, bool with_exp) {
  ir::Fusion f;
  auto* a = input(f, DataType::F32, {sym("M"), sym("K")}, "a");
  auto* b = input(f, DataType::F32, {sym("K"), sym("N")}, "b");
  ir::Val* p = ir::mul(ir::broadcast(a, {false, false, true}), ir::broadcast(b, {true, false, false}));
  if (with_exp) p = ir::exp(p);
  f.add_output(ir::sum(ir::tv(p), {1}));
  if (keep) f.add_output(ir::tv(p));
  const ir::SizeBindings sizes = {{"M", 5}, {"K", 37}, {"N", 3}};
  return evaluate(f, make_inputs(f, sizes, 11), sizes);
}

TEST(RefEvaluator, AProductReadOnlyByItsSumIsStreamedWithTheSameValuesAndBounds) {
  // A reduction's elementwise input read by nothing else is computed element
  // by element as the reduction visits it (a matmul's [M, K, N] product is
  // never held); values and error bounds equal those of the held tensor.
  for (bool with_exp : {false, true}) {
    std::vector<HostTensor> streamed = contraction(false, with_exp);
    std::vector<HostTensor> held = contraction(true, with_exp);
    ASSERT_EQ(held.size(), 2u);
    EXPECT_THAT(streamed[0].shape, ElementsAre(5, 3));
    EXPECT_EQ(streamed[0].data, held[0].data) << "exp " << with_exp;
    EXPECT_EQ(streamed[0].error, held[0].error) << "exp " << with_exp;
    EXPECT_THAT(held[1].shape, ElementsAre(5, 37, 3));
  }
}

// --- Input generation ------------------------------------------------------

TEST(RefInputs, PinnedSplitMix64Draws) {
  // The same numbers tests/fixtures/gen_fixtures.py must produce.
  ir::Fusion f;
  auto* x = input(f, DataType::F64, {c(4)}, "x");
  auto* i = input(f, DataType::I64, {c(4)}, "i");
  EXPECT_THAT(
      make_input(x, {}, 0, 0, {0.0, 1.0}).data,
      ElementsAre(0.5665615751722809, 0.7457817572627011, 0.9710027535867962, 0.4443592170557721));
  EXPECT_THAT(make_input(x, {}, 42, 1, {0.0, 1.0}).data,
              ElementsAre(0.008218912220709362, 0.6781117927515019, 0.8388096664112724,
                          0.43619101091796675));
  EXPECT_THAT(make_input(i, {}, 42, 1, {-8, 8}).data, ElementsAre(-8, 3, 6, -1));
}

TEST(RefInputs, SameSeedSameDataOtherSeedOrIndexDiffers) {
  ir::Fusion f;
  auto* x = input(f, DataType::F32, {c(16)}, "x");
  auto* y = input(f, DataType::F32, {c(16)}, "y");
  auto a = make_inputs(f, {}, 3);
  auto b = make_inputs(f, {}, 3);
  auto other = make_inputs(f, {}, 4);
  EXPECT_EQ(a[0].data, b[0].data);
  EXPECT_EQ(a[1].data, b[1].data);
  EXPECT_NE(a[0].data, other[0].data);
  EXPECT_NE(a[0].data, a[1].data);  // index is part of the seed
  EXPECT_EQ(a[0].shape, std::vector<int64_t>{16});
  // make_inputs is make_input with the input's position as index.
  EXPECT_EQ(make_input(x, {}, 3, 0, {-1, 1}).data, a[0].data);
  EXPECT_EQ(make_input(y, {}, 3, 1, {-1, 1}).data, a[1].data);
}

TEST(RefInputs, FloatRangeRespectedAndRoundedToDtype) {
  ir::Fusion f;
  auto* h = input(f, DataType::F16, {c(500)}, "h");
  auto t = make_input(h, {}, 1, 0, {2.0, 3.0});
  EXPECT_EQ(t.dtype, DataType::F16);
  for (double v : t.data) {
    EXPECT_GE(v, 2.0);
    EXPECT_LE(v, 3.0);
    EXPECT_EQ(v, ir::round_to_dtype(v, DataType::F16));
  }
  // f16 has 512 values in [2, 3]: 500 draws repeat some of them.
  std::vector<double> sorted = t.data;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

TEST(RefInputs, DefaultRangesFloatAndInteger) {
  ir::Fusion f;
  input(f, DataType::F32, {c(1000)}, "x");
  input(f, DataType::I32, {c(1000)}, "i");
  auto ins = make_inputs(f, {}, 9);
  auto [fmin, fmax] = std::minmax_element(ins[0].data.begin(), ins[0].data.end());
  EXPECT_GE(*fmin, -1.0);
  EXPECT_LT(*fmax, 1.0);
  EXPECT_LT(*fmin, -0.9);  // the range is used, not a sliver of it
  EXPECT_GT(*fmax, 0.9);
  auto [imin, imax] = std::minmax_element(ins[1].data.begin(), ins[1].data.end());
  EXPECT_EQ(*imin, -8);  // both ends are reachable
  EXPECT_EQ(*imax, 8);
  for (double v : ins[1].data) EXPECT_EQ(v, std::floor(v));
}

TEST(RefInputs, ExplicitIntegerRangeIsUsedAsGiven) {
  ir::Fusion f;
  auto* i = input(f, DataType::I64, {c(200)}, "i");
  auto t = make_input(i, {}, 5, 0, {0, 3});
  std::vector<double> seen = t.data;
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  EXPECT_THAT(seen, ElementsAre(0, 1, 2, 3));
  // ranges given to make_inputs apply to integers too.
  auto ins = make_inputs(f, {}, 5, {{0, 3}});
  EXPECT_EQ(ins[0].data, t.data);
}

TEST(RefInputs, BoolInputsAreZeroOrOne) {
  ir::Fusion f;
  input(f, DataType::Bool, {c(100)}, "b");
  auto t = make_inputs(f, {}, 2)[0];
  std::vector<double> seen = t.data;
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  EXPECT_THAT(seen, ElementsAre(0, 1));
}

TEST(RefInputs, NeverAllZeros) {
  ir::Fusion f;
  auto* i = input(f, DataType::I32, {c(2), c(3)}, "i");
  auto* x = input(f, DataType::F32, {c(4)}, "x");
  EXPECT_THAT(make_input(i, {}, 11, 0, {0, 0}).data, ElementsAre(1, 0, 0, 0, 0, 0));
  EXPECT_THAT(make_input(x, {}, 11, 1, {0, 0}).data, ElementsAre(1, 0, 0, 0));
  // A range that rounds to zero in f16 (below its smallest subnormal).
  auto* h = input(f, DataType::F16, {c(3)}, "h");
  EXPECT_THAT(make_input(h, {}, 11, 2, {0, 1e-10}).data, ElementsAre(1, 0, 0));
}

// --- User errors -----------------------------------------------------------

class RefErrors : public ::testing::Test {
 protected:
  RefErrors() {
    x_ = input(f_, DataType::F32, {sym("N"), c(8)}, "x");
    f_.add_output(ir::tv(ir::neg(x_)));
  }
  ir::Fusion f_{"negate"};
  ir::TensorView* x_;
};

TEST_F(RefErrors, WrongInputShape) {
  auto msg = user_error_of([&] {
    evaluate(f_, {host(DataType::F32, {4, 9}, std::vector<double>(36))}, {{"N", 4}});
  });
  EXPECT_THAT(msg, HasSubstr("evaluate: input 0 (T0 (x)) has shape [4, 9], expected [4, 8]"));
}

TEST_F(RefErrors, WrongInputDtype) {
  auto msg = user_error_of([&] {
    evaluate(f_, {host(DataType::F16, {4, 8}, std::vector<double>(32))}, {{"N", 4}});
  });
  EXPECT_THAT(msg, HasSubstr("evaluate: input 0 (T0 (x)) has dtype f16, expected f32"));
}

TEST_F(RefErrors, WrongInputCount) {
  auto msg = user_error_of([&] { evaluate(f_, {}, {{"N", 4}}); });
  EXPECT_THAT(msg, HasSubstr("fusion 'negate' has 1 inputs, but 0 tensors were given"));
}

TEST_F(RefErrors, DataSizeDoesNotMatchShape) {
  auto msg = user_error_of([&] {
    evaluate(f_, {host(DataType::F32, {4, 8}, std::vector<double>(31))}, {{"N", 4}});
  });
  EXPECT_THAT(msg, HasSubstr("input 0 (T0 (x)) holds 31 values, expected 32"));
}

TEST_F(RefErrors, UnboundSizeSymbol) {
  auto msg = user_error_of([&] { make_inputs(f_, {{"K", 3}}, 0); });
  EXPECT_THAT(msg, HasSubstr("size N is unbound (T0 (x) axis 0, extent N); bound sizes: {K=3}"));
  msg = user_error_of([&] {
    evaluate(f_, {host(DataType::F32, {4, 8}, std::vector<double>(32))}, {});
  });
  EXPECT_THAT(msg, HasSubstr("size N is unbound"));
}

TEST_F(RefErrors, NegativeSize) {
  auto msg = user_error_of([&] { make_inputs(f_, {{"N", -2}}, 0); });
  EXPECT_THAT(msg, HasSubstr("T0 (x) axis 0 has extent N = -2; expected a non-negative size"));
}

TEST_F(RefErrors, RangeCountAndInvalidRange) {
  auto msg = user_error_of([&] { make_inputs(f_, {{"N", 2}}, 0, {{0, 1}, {0, 1}}); });
  EXPECT_THAT(msg, HasSubstr("fusion 'negate' has 1 inputs but 2 value ranges were given"));
  msg = user_error_of([&] { make_input(x_, {{"N", 2}}, 0, 0, {1, 0}); });
  EXPECT_THAT(msg, HasSubstr("range [1, 0] for input 0 (T0 (x)) is invalid"));
}

TEST(RefTensor, NumelAndStrides) {
  HostTensor t{DataType::F32, {2, 3, 4}, {}};
  EXPECT_EQ(t.numel(), 24);
  EXPECT_THAT(t.strides(), ElementsAre(12, 4, 1));
  HostTensor s{DataType::F32, {}, {}};
  EXPECT_EQ(s.numel(), 1);
  EXPECT_TRUE(s.strides().empty());
  EXPECT_THAT((HostTensor{DataType::F32, {5, 0}, {}}).strides(), ElementsAre(0, 1));
}

}  // namespace
}  // namespace schedlab::ref
