// Fusion and the IR nodes: numbering, def/use wiring, inputs and outputs,
// statement order, and the user errors of add_input/add_output.
#include "schedlab/ir/fusion.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "schedlab/base/error.h"
#include "test_fusions.h"
#include "test_support.h"

namespace schedlab::ir {
namespace {

using test_support::user_error_of;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::input;
using ::testing::IsEmpty;
using testing::sym;

TEST(FusionTest, NumbersTensorsAndAxesInCreationOrder) {
  Fusion f;
  TensorView* x = f.make_tensor(DataType::F32, {sym("N"), sym("K")});
  f.make_scalar(1.0, DataType::F32);  // scalars take no tensor number
  TensorView* y = f.make_tensor(DataType::F32, {sym("N")});
  EXPECT_EQ(x->str(), "T0");
  EXPECT_EQ(y->str(), "T1");
  EXPECT_EQ(y->number(), 1);
  EXPECT_EQ(x->logical()[1]->id(), 1);
  EXPECT_EQ(y->logical()[0]->id(), 2);
  EXPECT_THAT(f.tensors(), ElementsAre(x, y));
  EXPECT_EQ(f.iter_domains().size(), 3u);
}

TEST(FusionTest, ExtentOneMakesABroadcastAxis) {
  Fusion f;
  TensorView* x =
      f.make_tensor(DataType::F32, {SizeExpr::constant(1), sym("K"), SizeExpr::constant(4)});
  EXPECT_TRUE(x->logical()[0]->is_broadcast());
  EXPECT_EQ(x->logical()[1]->iter_type(), IterType::Iteration);
  EXPECT_EQ(x->logical()[2]->iter_type(), IterType::Iteration);
}

TEST(FusionTest, LoopDomainStartsAsLogical) {
  Fusion f;
  TensorView* x = f.make_tensor(DataType::F32, {sym("N"), sym("K")});
  EXPECT_EQ(x->loop(), x->logical());
  EXPECT_EQ(x->axis(1), x->logical()[1]);
  EXPECT_EQ(x->nlogical(), 2);
  EXPECT_FALSE(x->has_reduction());
  EXPECT_EQ(x->compute_at_pos(), 0);
}

TEST(FusionTest, ReductionAxesAreNotData) {
  Fusion f;
  IterDomain* n = f.make_iter_domain(sym("N"), IterType::Iteration);
  IterDomain* k = f.make_iter_domain(sym("K"), IterType::Reduction);
  TensorView* t = f.make_tensor(DataType::F32, std::vector<IterDomain*>{n, k});
  EXPECT_TRUE(t->has_reduction());
  EXPECT_THAT(t->logical_no_reductions(), ElementsAre(n));
  EXPECT_EQ(t->nlogical(), 2);
}

TEST(FusionTest, DescribeAddsTheUserName) {
  Fusion f;
  TensorView* x = f.make_tensor(DataType::F32, {sym("N")});
  EXPECT_EQ(x->describe(), "T0");
  x->set_user_name("x");
  EXPECT_EQ(x->describe(), "T0 (x)");
  EXPECT_EQ(x->str(), "T0");
}

TEST(FusionTest, CreateWiresDefinitionAndUses) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  Val* y = exp(x);
  Val* z = add(x, y);
  ASSERT_NE(y->definition(), nullptr);
  EXPECT_TRUE(y->definition()->is<UnaryOp>());
  EXPECT_THAT(x->uses(), ElementsAre(y->definition(), z->definition()));
  EXPECT_THAT(y->uses(), ElementsAre(z->definition()));
  EXPECT_EQ(x->definition(), nullptr);
  EXPECT_EQ(z->definition()->out(), z);
  EXPECT_EQ(x->fusion(), &f);
}

TEST(FusionTest, SecondDefinitionIsInternalError) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = tv(neg(x));
  try {
    f.create<UnaryOp>(UnaryOpType::Exp, y, x);
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("T1 already has a definition (neg)"));
  }
}

TEST(FusionTest, OperandFromAnotherFusionIsInternalError) {
  Fusion f, g;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* out = g.make_tensor(DataType::F32, {sym("N")});
  try {
    g.create<UnaryOp>(UnaryOpType::Neg, out, x);
    FAIL() << "expected InternalError";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("neg: operand from another fusion"));
  }
}

TEST(FusionTest, InputsAndOutputsLiveInGlobalMemory) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = tv(exp(x));
  TensorView* z = tv(neg(y));
  f.add_output(z);
  EXPECT_EQ(x->memory_type(), MemoryType::Global);
  EXPECT_EQ(y->memory_type(), MemoryType::Local);
  EXPECT_EQ(z->memory_type(), MemoryType::Global);
  EXPECT_THAT(f.inputs(), ElementsAre(x));
  EXPECT_THAT(f.outputs(), ElementsAre(z));
  EXPECT_TRUE(f.is_input(x));
  EXPECT_FALSE(f.is_input(y));
  EXPECT_TRUE(f.is_output(z));
  EXPECT_FALSE(f.is_output(x));
}

TEST(FusionTest, ErrorInputWithDefinition) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = tv(exp(x));
  y->set_user_name("y");
  EXPECT_THAT(user_error_of([&] { f.add_input(y); }),
              HasSubstr("fusion input T1 (y) must not have a definition, found exp"));
}

TEST(FusionTest, ErrorInputTwice) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  EXPECT_THAT(user_error_of([&] { f.add_input(x); }),
              HasSubstr("T0 (x) is already a fusion input"));
}

TEST(FusionTest, ErrorOutputTwice) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  TensorView* y = tv(exp(x));
  f.add_output(y);
  EXPECT_THAT(user_error_of([&] { f.add_output(y); }),
              HasSubstr("T1 is listed twice as a fusion output"));
}

TEST(FusionTest, ExprsForOutputsIsATopologicalOrderOfLiveExpressions) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  Val* dead = exp(x);
  Val* b = neg(x);
  Val* a = relu(x);
  Val* y = add(a, b);
  f.add_output(tv(y));
  // Creation order lists the dead exp; the statement sort drops it and visits
  // operands left to right, so relu comes before neg.
  EXPECT_EQ(f.exprs().size(), 4u);
  EXPECT_THAT(f.exprs_for_outputs(),
              ElementsAre(a->definition(), b->definition(), y->definition()));
  EXPECT_THAT(dead->uses(), IsEmpty());
}

TEST(FusionTest, ExprsForOutputsVisitsSharedExpressionsOnce) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  Val* e = exp(x);
  Val* y1 = neg(e);
  Val* y2 = mul(e, y1);
  f.add_output(tv(y1));
  f.add_output(tv(y2));
  EXPECT_THAT(f.exprs_for_outputs(),
              ElementsAre(e->definition(), y1->definition(), y2->definition()));
}

TEST(FusionTest, SizeSymbolsComeFromInputsInFirstSeenOrder) {
  Fusion f;
  input(f, "x", DataType::F32, {sym("N"), sym("K")});
  input(f, "w", DataType::F32, {sym("K"), SizeExpr::constant(1)});
  input(f, "z", DataType::F32, {SizeExpr::ceil_div(sym("M"), SizeExpr::constant(4)), sym("N")});
  EXPECT_THAT(f.size_symbols(), ElementsAre("N", "K", "M"));
}

TEST(FusionTest, EnumNames) {
  EXPECT_EQ(iter_type_name(IterType::Reduction), "Reduction");
  EXPECT_EQ(parallel_type_name(ParallelType::TIDx), "TIDx");
  EXPECT_EQ(memory_type_name(MemoryType::Shared), "Shared");
  EXPECT_EQ(unary_op_name(UnaryOpType::Not), "logical_not");
  EXPECT_EQ(binary_op_name(BinaryOpType::Max), "maximum");
  EXPECT_EQ(reduction_op_name(ReductionOpType::Prod), "prod");
  EXPECT_EQ(load_store_op_name(LoadStoreOpType::CpAsync), "CpAsync");
  EXPECT_TRUE(is_comparison(BinaryOpType::Ne));
  EXPECT_FALSE(is_comparison(BinaryOpType::And));
  EXPECT_TRUE(is_logical(BinaryOpType::Or));
}

}  // namespace
}  // namespace schedlab::ir
