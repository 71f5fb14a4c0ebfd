// The builder (arith.h): result dtypes, NumPy broadcasting, reductions,
// constant folding, and every user error with its message.
#include "schedlab/ir/arith.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/ir/printer.h"
#include "schedlab/ir/verifier.h"
#include "test_fusions.h"
#include "test_support.h"

namespace schedlab::ir {
namespace {

using test_support::user_error_of;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::input;
using testing::sym;

std::vector<IterType> iter_types(const TensorView* t) {
  std::vector<IterType> r;
  for (IterDomain* id : t->logical()) r.push_back(id->iter_type());
  return r;
}

std::vector<std::string> extents(const TensorView* t) {
  std::vector<std::string> r;
  for (IterDomain* id : t->logical()) r.push_back(id->extent().str());
  return r;
}

/// The tensor operand `i` of t's definition.
TensorView* operand(const TensorView* t, size_t i) {
  return t->definition()->inputs().at(i)->as<TensorView>();
}

constexpr auto I = IterType::Iteration;
constexpr auto R = IterType::Reduction;
constexpr auto B = IterType::Broadcast;

class BuilderTest : public ::testing::Test {
 protected:
  /// An input named `name` of shape [N, K].
  TensorView* nk(const std::string& name, DataType t = DataType::F32) {
    return input(f, name, t, {sym("N"), sym("K")});
  }
  /// Checks the fusion the test built is valid IR.
  void TearDown() override {
    if (!HasFailure()) {
      EXPECT_NO_THROW(verify(f)) << print_math(f);
    }
  }
  Fusion f;
};

// --- dtypes --------------------------------------------------------------------

TEST_F(BuilderTest, HalfMathRoundsBackToTheHalfType) {
  for (DataType half : {DataType::F16, DataType::BF16}) {
    TensorView* x = nk("x", half);
    // exp of a half is a half (PyTorch): computed on an f32 cast of x, the
    // result cast back.
    TensorView* y = tv(exp(x));
    EXPECT_EQ(y->dtype(), half);
    ASSERT_TRUE(y->definition()->is<CastOp>());
    TensorView* e = operand(y, 0);
    ASSERT_TRUE(e->definition()->is<UnaryOp>());
    EXPECT_EQ(e->dtype(), DataType::F32);
    TensorView* in = operand(e, 0);
    ASSERT_TRUE(in->definition()->is<CastOp>());
    EXPECT_EQ(operand(in, 0), x);
    // Reductions accumulate in f32 and cast the result back once (PyTorch).
    TensorView* s = sum(x, {1});
    EXPECT_EQ(s->dtype(), half);
    ASSERT_TRUE(s->definition()->is<CastOp>());
    TensorView* r = operand(s, 0);
    ASSERT_TRUE(r->definition()->is<ReductionOp>());
    EXPECT_EQ(r->dtype(), DataType::F32);
    EXPECT_EQ(operand(operand(r, 0), 0), x);
    // A sum of an f32 operand stays f32, with no cast after it.
    TensorView* w = sum(tv(cast(x, DataType::F32)), {1});
    EXPECT_EQ(w->dtype(), DataType::F32);
    EXPECT_TRUE(w->definition()->is<ReductionOp>());
  }
}

TEST_F(BuilderTest, HalfAddSubMulNegAbsAreHalfOps) {
  for (DataType half : {DataType::F16, DataType::BF16}) {
    TensorView* x = nk("x", half);
    TensorView* y = nk("y", half);
    for (BinaryOpType op : {BinaryOpType::Add, BinaryOpType::Sub, BinaryOpType::Mul}) {
      TensorView* z = tv(binary(op, x, y));
      EXPECT_EQ(z->dtype(), half) << binary_op_name(op);
      ASSERT_TRUE(z->definition()->is<BinaryOp>()) << binary_op_name(op);
      EXPECT_EQ(operand(z, 0), x);
      EXPECT_EQ(operand(z, 1), y);
    }
    for (UnaryOpType op : {UnaryOpType::Neg, UnaryOpType::Abs}) {
      TensorView* z = tv(unary(op, x));
      EXPECT_EQ(z->dtype(), half);
      ASSERT_TRUE(z->definition()->is<UnaryOp>());
      EXPECT_EQ(operand(z, 0), x);
    }
    // Division, max, a scalar operand: in f32, then one rounding back.
    for (Val* z : {div(x, y), binary(BinaryOpType::Max, x, y), mul(x, constant(f, 0.1))}) {
      EXPECT_EQ(z->dtype(), half);
      ASSERT_TRUE(tv(z)->definition()->is<CastOp>());
      EXPECT_EQ(operand(tv(z), 0)->dtype(), DataType::F32);
    }
  }
}

TEST_F(BuilderTest, F16WithBF16IsF32) {
  EXPECT_EQ(add(nk("a", DataType::F16), nk("b", DataType::BF16))->dtype(), DataType::F32);
}

TEST_F(BuilderTest, ComparisonsProduceBool) {
  TensorView* x = nk("x");
  TensorView* y = nk("y");
  for (BinaryOpType op : {BinaryOpType::Lt, BinaryOpType::Le, BinaryOpType::Gt, BinaryOpType::Ge,
                          BinaryOpType::Eq, BinaryOpType::Ne})
    EXPECT_EQ(binary(op, x, y)->dtype(), DataType::Bool) << binary_op_name(op);
  TensorView* m = tv(binary(BinaryOpType::Lt, x, y));
  EXPECT_EQ(binary(BinaryOpType::And, m, m)->dtype(), DataType::Bool);
  // eq/ne accept bool operands.
  EXPECT_EQ(binary(BinaryOpType::Eq, m, m)->dtype(), DataType::Bool);
  EXPECT_EQ(unary(UnaryOpType::Not, m)->dtype(), DataType::Bool);
}

TEST_F(BuilderTest, IntegerDivisionIsTrueDivisionInF32) {
  TensorView* a = nk("a", DataType::I32);
  TensorView* b = nk("b", DataType::I32);
  TensorView* q = tv(div(a, b));
  EXPECT_EQ(q->dtype(), DataType::F32);
  EXPECT_EQ(operand(q, 0)->dtype(), DataType::F32);
  EXPECT_EQ(operand(q, 1)->dtype(), DataType::F32);
  // Other integer arithmetic stays integral.
  EXPECT_EQ(add(a, b)->dtype(), DataType::I32);
  EXPECT_EQ(mul(a, nk("c", DataType::I64))->dtype(), DataType::I64);
}

TEST_F(BuilderTest, TranscendentalOfIntegerIsF32) {
  TensorView* a = nk("a", DataType::I32);
  EXPECT_EQ(exp(a)->dtype(), DataType::F32);
  EXPECT_EQ(sqrt(nk("b", DataType::I64))->dtype(), DataType::F32);
  // neg, abs and relu stay integral.
  EXPECT_EQ(neg(a)->dtype(), DataType::I32);
  EXPECT_EQ(relu(a)->dtype(), DataType::I32);
}

TEST_F(BuilderTest, IntegerTensorTimesFloatConstantIsF32) {
  TensorView* a = nk("a", DataType::I32);
  EXPECT_EQ(mul(a, constant(f, 0.5))->dtype(), DataType::F32);
  EXPECT_EQ(mul(constant(f, 0.5), a)->dtype(), DataType::F32);
  // An integer constant leaves the tensor's type alone, even a wider one;
  // a float constant does not widen a float tensor.
  EXPECT_EQ(mul(a, constant(f, 2, DataType::I64))->dtype(), DataType::I32);
  EXPECT_EQ(mul(nk("h", DataType::F16), constant(f, 0.5))->dtype(), DataType::F16);
  EXPECT_EQ(mul(nk("d", DataType::F64), constant(f, 0.5, DataType::F32))->dtype(), DataType::F64);
}

TEST_F(BuilderTest, WhereTakesTheBranchesType) {
  TensorView* x = nk("x");
  TensorView* c = tv(binary(BinaryOpType::Gt, x, constant(f, 0.0)));
  TensorView* y = tv(where(c, x, constant(f, 0.0)));
  EXPECT_EQ(y->dtype(), DataType::F32);
  ASSERT_TRUE(y->definition()->is<WhereOp>());
  EXPECT_EQ(where(c, nk("i", DataType::I32), nk("h", DataType::F16))->dtype(), DataType::F16);
  EXPECT_EQ(where(c, nk("j", DataType::I32), constant(f, 0.5))->dtype(), DataType::F32);
}

TEST_F(BuilderTest, CastKeepsTheShape) {
  TensorView* x = nk("x");
  TensorView* y = tv(cast(x, DataType::BF16));
  EXPECT_EQ(y->dtype(), DataType::BF16);
  EXPECT_THAT(extents(y), ElementsAre("N", "K"));
  ASSERT_TRUE(y->definition()->is<CastOp>());
}

// --- broadcasting ----------------------------------------------------------------

TEST_F(BuilderTest, LowerRankOperandGainsLeadingBroadcastAxes) {
  TensorView* x = nk("x");
  TensorView* b = input(f, "b", DataType::F32, {sym("K")});
  TensorView* y = tv(add(x, b));
  EXPECT_THAT(extents(y), ElementsAre("N", "K"));
  EXPECT_THAT(iter_types(y), ElementsAre(I, I));
  EXPECT_EQ(operand(y, 0), x);
  TensorView* bb = operand(y, 1);
  ASSERT_TRUE(bb->definition()->is<BroadcastOp>());
  EXPECT_THAT(bb->definition()->as<BroadcastOp>()->is_broadcast_dim(), ElementsAre(true, false));
  EXPECT_EQ(operand(bb, 0), b);
  EXPECT_THAT(iter_types(bb), ElementsAre(B, I));
  EXPECT_THAT(extents(bb), ElementsAre("1", "K"));
}

TEST_F(BuilderTest, RankTwoBroadcastAgainstRankFour) {
  TensorView* x = input(f, "x", DataType::F32, {sym("A"), sym("B"), sym("N"), sym("K")});
  TensorView* y = tv(mul(nk("w"), x));
  EXPECT_THAT(extents(y), ElementsAre("A", "B", "N", "K"));
  EXPECT_THAT(operand(y, 0)->definition()->as<BroadcastOp>()->is_broadcast_dim(),
              ElementsAre(true, true, false, false));
}

TEST_F(BuilderTest, BroadcastAxesStretchOnEitherSide) {
  TensorView* col = input(f, "col", DataType::F32, {sym("N"), SizeExpr::constant(1)});
  TensorView* row = input(f, "row", DataType::F32, {SizeExpr::constant(1), sym("K")});
  EXPECT_THAT(iter_types(col), ElementsAre(I, B));
  TensorView* y = tv(add(col, row));
  EXPECT_THAT(extents(y), ElementsAre("N", "K"));
  EXPECT_THAT(iter_types(y), ElementsAre(I, I));
  // No BroadcastOp is needed when the ranks already agree.
  EXPECT_EQ(operand(y, 0), col);
  EXPECT_EQ(operand(y, 1), row);
}

TEST_F(BuilderTest, BroadcastOnEverySideStaysBroadcast) {
  TensorView* a = input(f, "a", DataType::F32, {sym("N"), SizeExpr::constant(1)});
  TensorView* b = input(f, "b", DataType::F32, {sym("N"), SizeExpr::constant(1)});
  TensorView* y = tv(sub(a, b));
  EXPECT_THAT(iter_types(y), ElementsAre(I, B));
  EXPECT_THAT(extents(y), ElementsAre("N", "1"));
}

TEST_F(BuilderTest, ScalarOperandsDoNotBroadcast) {
  TensorView* x = nk("x");
  TensorView* y = tv(add(x, constant(f, 1.0)));
  EXPECT_THAT(extents(y), ElementsAre("N", "K"));
  EXPECT_EQ(operand(y, 0), x);
  EXPECT_TRUE(y->definition()->inputs()[1]->is<Scalar>());
}

TEST_F(BuilderTest, ResultsGetFreshIterDomains) {
  TensorView* x = nk("x");
  TensorView* y = tv(neg(x));
  ASSERT_EQ(y->nlogical(), 2);
  EXPECT_NE(y->logical()[0], x->logical()[0]);
  EXPECT_TRUE(y->logical()[0]->extent().same_as(x->logical()[0]->extent()));
}

// --- reductions, permutes ---------------------------------------------------------

TEST_F(BuilderTest, ReductionKeepsReducedAxesAsReduction) {
  TensorView* x = nk("x");
  TensorView* s = sum(x, {1});
  ASSERT_TRUE(s->definition()->is<ReductionOp>());
  EXPECT_EQ(s->definition()->as<ReductionOp>()->op(), ReductionOpType::Sum);
  EXPECT_THAT(iter_types(s), ElementsAre(I, R));
  EXPECT_THAT(extents(s), ElementsAre("N", "K"));
  EXPECT_EQ(s->logical_no_reductions().size(), 1u);
  // Reducing everything leaves a rank-0 result.
  TensorView* all = max(x, {});
  EXPECT_THAT(iter_types(all), ElementsAre(R, R));
  EXPECT_TRUE(all->logical_no_reductions().empty());
}

TEST_F(BuilderTest, KeepdimIsReductionThenBroadcast) {
  TensorView* x = nk("x");
  TensorView* s = sum(x, {1}, /*keepdim=*/true);
  ASSERT_TRUE(s->definition()->is<BroadcastOp>());
  EXPECT_THAT(s->definition()->as<BroadcastOp>()->is_broadcast_dim(), ElementsAre(false, true));
  EXPECT_THAT(iter_types(s), ElementsAre(I, B));
  EXPECT_THAT(extents(s), ElementsAre("N", "1"));
  TensorView* r = operand(s, 0);
  ASSERT_TRUE(r->definition()->is<ReductionOp>());
  EXPECT_THAT(iter_types(r), ElementsAre(I, R));
  EXPECT_EQ(operand(r, 0), x);
  // The kept result broadcasts back against its input.
  EXPECT_THAT(iter_types(tv(sub(x, s))), ElementsAre(I, I));
}

TEST_F(BuilderTest, NegativeAxesCountFromTheEnd) {
  TensorView* x = input(f, "x", DataType::F32, {sym("A"), sym("B"), sym("C")});
  EXPECT_THAT(iter_types(sum(x, {-1})), ElementsAre(I, I, R));
  EXPECT_THAT(iter_types(sum(x, {-3})), ElementsAre(R, I, I));
  EXPECT_THAT(iter_types(sum(x, {0, -1})), ElementsAre(R, I, R));
  EXPECT_THAT(iter_types(sum(x, {-1}, true)), ElementsAre(I, I, B));
}

TEST_F(BuilderTest, ReductionOfAReductionCountsOnlyDataAxes) {
  TensorView* x = input(f, "x", DataType::F32, {sym("A"), sym("B"), sym("C")});
  TensorView* s = sum(x, {1});   // [A, rB, C]
  TensorView* t = max(s, {-1});  // axis -1 is C
  EXPECT_THAT(iter_types(t), ElementsAre(I, R));
  EXPECT_THAT(extents(t), ElementsAre("A", "C"));
}

TEST_F(BuilderTest, MaxOfBoolIsAllowed) {
  TensorView* m = tv(binary(BinaryOpType::Gt, nk("x"), constant(f, 0.0)));
  EXPECT_EQ(max(m, {1})->dtype(), DataType::Bool);
}

TEST_F(BuilderTest, PermuteAndTranspose) {
  TensorView* x = input(f, "x", DataType::F32, {sym("A"), sym("B"), sym("C")});
  TensorView* p = permute(x, {2, 0, 1});
  EXPECT_THAT(extents(p), ElementsAre("C", "A", "B"));
  EXPECT_THAT(p->definition()->as<PermuteOp>()->new2old(), ElementsAre(2, 0, 1));
  // Negative axes are normalized before they are recorded.
  EXPECT_THAT(permute(x, {-1, 1, 0})->definition()->as<PermuteOp>()->new2old(),
              ElementsAre(2, 1, 0));
  TensorView* t = transpose(x, 0, -1);
  EXPECT_THAT(extents(t), ElementsAre("C", "B", "A"));
  EXPECT_THAT(t->definition()->as<PermuteOp>()->new2old(), ElementsAre(2, 1, 0));
}

TEST_F(BuilderTest, SetCopies) {
  TensorView* x = nk("x", DataType::BF16);
  TensorView* y = set(x);
  EXPECT_EQ(y->dtype(), DataType::BF16);
  ASSERT_TRUE(y->definition()->is<LoadStoreOp>());
  EXPECT_EQ(y->definition()->as<LoadStoreOp>()->op(), LoadStoreOpType::Set);
}

TEST_F(BuilderTest, ExplicitBroadcast) {
  TensorView* x = input(f, "x", DataType::F32, {sym("K")});
  TensorView* y = broadcast(x, {true, false, true});
  EXPECT_THAT(iter_types(y), ElementsAre(B, I, B));
  EXPECT_THAT(extents(y), ElementsAre("1", "K", "1"));
}

// --- constant folding ---------------------------------------------------------------

TEST_F(BuilderTest, ScalarOnlyOperationsFold) {
  Val* v = add(constant(f, 2.0), constant(f, 3.0));
  ASSERT_TRUE(v->is<Scalar>());
  EXPECT_EQ(v->as<Scalar>()->value(), 5.0);
  EXPECT_EQ(v->dtype(), DataType::F64);

  Val* e = exp(constant(f, 0.0));
  ASSERT_TRUE(e->is<Scalar>());
  EXPECT_EQ(e->as<Scalar>()->value(), 1.0);

  Val* lt = binary(BinaryOpType::Lt, constant(f, 1.0), constant(f, 2.0));
  EXPECT_EQ(lt->dtype(), DataType::Bool);
  EXPECT_EQ(lt->as<Scalar>()->value(), 1.0);

  Val* w = where(lt, constant(f, 7.0), constant(f, 8.0));
  EXPECT_EQ(w->as<Scalar>()->value(), 7.0);

  Val* c = cast(constant(f, -3.7), DataType::I32);
  EXPECT_EQ(c->dtype(), DataType::I32);
  EXPECT_EQ(c->as<Scalar>()->value(), -3.0);

  // Folding leaves no expression behind.
  EXPECT_TRUE(f.exprs().empty());
}

TEST_F(BuilderTest, FoldingRoundsToTheResultType) {
  // Integer constants are Python-style scalars: true division and
  // transcendentals of them fold in f64, so `1 / sqrt(2)` is exact...
  Val* q = div(constant(f, 2, DataType::I32), constant(f, 3, DataType::I32));
  EXPECT_EQ(q->dtype(), DataType::F64);
  EXPECT_EQ(q->as<Scalar>()->value(), 2.0 / 3.0);
  Val* r = div(constant(f, 1, DataType::I32), sqrt(constant(f, 2, DataType::I64)));
  EXPECT_EQ(r->dtype(), DataType::F64);
  EXPECT_EQ(r->as<Scalar>()->value(), 1.0 / std::sqrt(2.0));
  // ...while integer tensors divide in f32.
  EXPECT_EQ(div(nk("a", DataType::I32), constant(f, 3, DataType::I32))->dtype(), DataType::F32);
  // Integer arithmetic stays integral.
  Val* s = add(constant(f, 2, DataType::I32), constant(f, 3, DataType::I32));
  EXPECT_EQ(s->dtype(), DataType::I32);
  // f16 constants compute in f32.
  Val* h = div(constant(f, 1.0, DataType::F16), constant(f, 3.0, DataType::F16));
  EXPECT_EQ(h->dtype(), DataType::F32);
  EXPECT_EQ(h->as<Scalar>()->value(), static_cast<double>(1.0f / 3.0f));
  // Casting a constant to f16 rounds it.
  EXPECT_EQ(cast(constant(f, 65520.0), DataType::F16)->as<Scalar>()->value(), INFINITY);
}

// --- user errors ----------------------------------------------------------------------

TEST_F(BuilderTest, ErrorAxisOutOfRange) {
  TensorView* x = nk("x");
  std::string msg = user_error_of([&] { sum(x, {2}); });
  EXPECT_THAT(msg,
              AllOf(HasSubstr("sum: axis 2 is out of range for"), HasSubstr(x->describe()),
                    HasSubstr("T0 (x) of shape [N, K]"), HasSubstr("expected an axis in [-2, 1]")));
  EXPECT_THAT(user_error_of([&] { max(x, {-3}); }),
              AllOf(HasSubstr("max: axis -3"), HasSubstr("expected an axis in [-2, 1]")));
  EXPECT_THAT(user_error_of([&] { transpose(x, 0, 5); }),
              AllOf(HasSubstr("transpose: axis 5"), HasSubstr("T0 (x)")));
  EXPECT_THAT(user_error_of([&] {
                permute(x, {0, 2});
              }),
              AllOf(HasSubstr("permute: axis 2"), HasSubstr("expected an axis in [-2, 1]")));
}

TEST_F(BuilderTest, ErrorDuplicateReductionAxis) {
  TensorView* x = nk("x");
  EXPECT_THAT(user_error_of([&] {
                sum(x, {1, -1});
              }),
              HasSubstr("sum: axis -1 of T0 (x) is listed twice"));
}

TEST_F(BuilderTest, ErrorBroadcastMismatch) {
  TensorView* a = input(f, "a", DataType::F32, {sym("N")});
  TensorView* b = input(f, "b", DataType::F32, {sym("K")});
  std::string msg = user_error_of([&] { add(a, b); });
  EXPECT_THAT(msg, AllOf(HasSubstr("add: cannot broadcast"), HasSubstr("T0 (a) of shape [N]"),
                         HasSubstr("T1 (b) of shape [K]"),
                         HasSubstr("axis 0 has extent N on one side and K on the other"),
                         HasSubstr("expected equal extents or a broadcast (1)")));
}

TEST_F(BuilderTest, ErrorBroadcastMismatchAfterRankExpansion) {
  TensorView* x = nk("x");
  TensorView* w = input(f, "w", DataType::F32, {sym("N")});
  // w gains a leading axis and is compared on axis 1: N against K.
  EXPECT_THAT(user_error_of([&] { mul(x, w); }),
              AllOf(HasSubstr("mul: cannot broadcast T0 (x) of shape [N, K]"),
                    HasSubstr("axis 1 has extent K on one side and N on the other")));
}

TEST_F(BuilderTest, ErrorBoolOperandToArithmetic) {
  TensorView* x = nk("x");
  TensorView* m = tv(binary(BinaryOpType::Gt, x, constant(f, 0.0)));
  m->set_user_name("mask");
  EXPECT_THAT(user_error_of([&] { add(x, m); }),
              HasSubstr("add: expected numeric operands, found bool (T1 (mask))"));
  EXPECT_THAT(user_error_of([&] { binary(BinaryOpType::Lt, m, x); }),
              HasSubstr("lt: expected numeric operands, found bool (T1 (mask))"));
  EXPECT_THAT(user_error_of([&] { exp(m); }),
              HasSubstr("exp: expected a numeric operand, found bool (T1 (mask))"));
  EXPECT_THAT(user_error_of([&] { add(constant(f, 1, DataType::Bool), x); }),
              HasSubstr("add: expected numeric operands, found bool (true)"));
}

TEST_F(BuilderTest, ErrorNonBoolLogicalOperand) {
  TensorView* x = nk("x");
  TensorView* m = tv(binary(BinaryOpType::Gt, x, constant(f, 0.0)));
  EXPECT_THAT(user_error_of([&] { binary(BinaryOpType::And, m, x); }),
              HasSubstr("logical_and: expected bool operands, found f32 (T0 (x))"));
  EXPECT_THAT(user_error_of([&] { unary(UnaryOpType::Not, x); }),
              HasSubstr("logical_not: expected a bool operand, found f32 (T0 (x))"));
}

TEST_F(BuilderTest, ErrorNonBoolWhereCondition) {
  TensorView* x = nk("x");
  EXPECT_THAT(user_error_of([&] { where(x, x, constant(f, 0.0)); }),
              HasSubstr("where: expected a bool condition, found f32 (T0 (x))"));
  EXPECT_THAT(user_error_of([&] { where(constant(f, 1.0), x, x); }),
              HasSubstr("where: expected a bool condition, found f64 (1)"));
}

TEST_F(BuilderTest, ErrorPermuteWrongLength) {
  TensorView* x = nk("x");
  EXPECT_THAT(user_error_of([&] {
                permute(x, {1, 0, 2});
              }),
              HasSubstr("permute: expected 2 axes for T0 (x) of shape [N, K], found 3"));
  EXPECT_THAT(user_error_of([&] { permute(x, {0}); }),
              HasSubstr("permute: expected 2 axes for T0 (x) of shape [N, K], found 1"));
}

TEST_F(BuilderTest, ErrorPermuteDuplicateAxis) {
  TensorView* x = nk("x");
  EXPECT_THAT(user_error_of([&] {
                permute(x, {1, 1});
              }),
              HasSubstr("permute: axis 1 of T0 (x) appears twice"));
  // -2 and 0 name the same axis.
  EXPECT_THAT(user_error_of([&] {
                permute(x, {-2, 0});
              }),
              HasSubstr("permute: axis 0 of T0 (x) appears twice"));
}

TEST_F(BuilderTest, ErrorBroadcastFlagCount) {
  TensorView* x = nk("x");
  EXPECT_THAT(user_error_of([&] {
                broadcast(x, {true, false});
              }),
              HasSubstr("broadcast: T0 (x) has 2 axes but the broadcast pattern keeps 1; "
                        "expected one false entry per axis"));
  EXPECT_THAT(user_error_of([&] {
                broadcast(x, {false, false, false});
              }),
              HasSubstr("has 2 axes but the broadcast pattern keeps 3"));
}

TEST_F(BuilderTest, ErrorReduceRankZero) {
  TensorView* s = input(f, "s", DataType::F32, {});
  EXPECT_THAT(user_error_of([&] { sum(s, {}); }),
              HasSubstr("sum: cannot reduce T0 (s), which has no axes (rank 0)"));
  // A full reduction's result has no data axes left either.
  TensorView* x = nk("x");
  TensorView* all = sum(x, {});
  EXPECT_THAT(user_error_of([&] { max(all, {}); }),
              HasSubstr("max: cannot reduce T2, which has no axes (rank 0)"));
}

TEST_F(BuilderTest, ErrorSumOfBool) {
  TensorView* m = tv(binary(BinaryOpType::Gt, nk("x"), constant(f, 0.0)));
  m->set_user_name("mask");
  EXPECT_THAT(user_error_of([&] { sum(m, {1}); }),
              HasSubstr("sum: expected a numeric operand, found bool (T1 (mask))"));
  EXPECT_THAT(user_error_of([&] { reduce(ReductionOpType::Prod, m, {}); }),
              HasSubstr("prod: expected a numeric operand, found bool (T1 (mask))"));
}

TEST_F(BuilderTest, TvOfAScalarIsInternalError) {
  EXPECT_THROW(tv(constant(f, 1.0)), InternalError);
}

}  // namespace
}  // namespace schedlab::ir

namespace schedlab::ir {
namespace {
TEST(BuilderScalarTest, ConstantIsRoundedToItsDtype) {
  Fusion f;
  EXPECT_EQ(constant(f, 2.5, DataType::I32)->value(), 2.0);
  EXPECT_EQ(constant(f, 1.0 / 3.0, DataType::F16)->value(), 0.333251953125);
  EXPECT_EQ(constant(f, 0.1, DataType::F64)->value(), 0.1);
}

TEST(BuilderScalarTest, MeanDividesBySymbolicCount) {
  Fusion f;
  auto* x = f.make_tensor(DataType::F32, {SizeExpr::symbol("N"), SizeExpr::symbol("K")});
  f.add_input(x);
  auto* m = mean(x, {1});
  auto* d = m->definition()->as<BinaryOp>();
  ASSERT_NE(d, nullptr);
  auto* n = d->rhs()->as<Scalar>();
  ASSERT_NE(n, nullptr);
  ASSERT_TRUE(n->is_size());
  EXPECT_EQ(n->str(), "K");
  EXPECT_EQ(n->evaluate({{"K", 7}}), 7.0);
  auto* all = mean(x, {});
  EXPECT_EQ(all->definition()->inputs()[1]->str(), "(N * K)");
}

TEST(BuilderScalarTest, SizeScalarsDoNotFold) {
  Fusion f;
  auto* k = f.make_size_scalar(SizeExpr::symbol("K"));
  EXPECT_THAT(user_error_of([&] { sub(k, constant(f, 1.0)); }),
              HasSubstr("the size K is known only at launch"));
}
}  // namespace
}  // namespace schedlab::ir
