// The verifier: builder output passes; hand-built invalid IR throws an
// InternalError that names the expression, the tensor and the broken rule.
#include "schedlab/ir/verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "schedlab/base/error.h"
#include "schedlab/ir/printer.h"
#include "test_fusions.h"

namespace schedlab::ir {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::input;
using testing::sym;

/// The message of the InternalError verify(f) throws; fails if it passes.
std::string verify_error(const Fusion& f) {
  try {
    verify(f);
  } catch (const InternalError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected verify to throw InternalError";
  return "";
}

// --- valid fusions ----------------------------------------------------------------

TEST(VerifierTest, SoftmaxPasses) {
  auto f = testing::make_softmax();
  EXPECT_NO_THROW(verify(*f)) << print_math(*f);
}

TEST(VerifierTest, LayernormPasses) {
  auto f = testing::make_layernorm();
  EXPECT_NO_THROW(verify(*f)) << print_math(*f);
}

TEST(VerifierTest, TransposeAndKeepdimPass) {
  EXPECT_NO_THROW(verify(*testing::make_transpose()));
  EXPECT_NO_THROW(verify(*testing::make_keepdim()));
}

TEST(VerifierTest, MixedDtypesAndBroadcastsPass) {
  Fusion f;
  TensorView* a = input(f, "a", DataType::I32, {sym("N"), sym("K")});
  TensorView* h = input(f, "h", DataType::BF16, {sym("K")});
  TensorView* m = input(f, "m", DataType::Bool, {sym("N"), SizeExpr::constant(1)});
  Val* q = div(a, h);
  Val* c = binary(BinaryOpType::Eq, m, binary(BinaryOpType::Gt, q, constant(f, 0.5)));
  Val* w = where(binary(BinaryOpType::And, c, m), q, exp(a));
  TensorView* y = tv(cast(max(tv(w), {0}, true), DataType::F16));
  f.add_output(y);
  f.add_output(permute(tv(unary(UnaryOpType::Not, m)), {1, 0}));
  EXPECT_NO_THROW(verify(f)) << print_math(f);
}

TEST(VerifierTest, EmptyFusionAndPassThroughOutputPass) {
  Fusion f;
  EXPECT_NO_THROW(verify(f));
  TensorView* x = input(f, "x", DataType::F32, {sym("N")});
  f.add_output(x);
  EXPECT_NO_THROW(verify(f));
}

TEST(VerifierTest, ComputeAtAtTheInnermostPositionPasses) {
  Fusion f;
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  TensorView* y = tv(exp(x));
  f.add_output(tv(neg(y)));
  y->set_compute_at_pos(2);
  EXPECT_NO_THROW(verify(f));
}

// --- invalid IR, built by hand ----------------------------------------------------------

/// Two f32 inputs a, b of shape [N, K]; tests add a broken expression.
class VerifierErrorTest : public ::testing::Test {
 protected:
  VerifierErrorTest() {
    a = input(f, "a", DataType::F32, {sym("N"), sym("K")});
    b = input(f, "b", DataType::F32, {sym("N"), sym("K")});
  }
  /// A new tensor; outputs of broken expressions are made with it.
  TensorView* tensor(DataType t, const std::vector<SizeExpr>& shape) {
    return f.make_tensor(t, shape);
  }
  /// Marks t a fusion output and returns it.
  TensorView* output(TensorView* t) {
    f.add_output(t);
    return t;
  }
  Fusion f;
  TensorView* a = nullptr;
  TensorView* b = nullptr;
};

TEST_F(VerifierErrorTest, ErrorsSayTheyAreInternal) {
  TensorView* out = output(tensor(DataType::F32, {sym("N")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, b);
  EXPECT_THAT(verify_error(f), HasSubstr("internal error (a bug in schedlab"));
}

TEST_F(VerifierErrorTest, BinaryOutputWithWrongRank) {
  TensorView* out = output(tensor(DataType::F32, {sym("N")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, b);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = add(...): operand T0 has rank 2, expected 1"));
}

TEST_F(VerifierErrorTest, BinaryOutputWithWrongExtent) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("M")}));
  f.create<BinaryOp>(BinaryOpType::Mul, out, a, b);
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = mul(...): axis 1 of T0 has extent K but the output's is iS5{M}"));
}

TEST_F(VerifierErrorTest, ElementwiseOutputAxisNobodyIterates) {
  TensorView* r = input(f, "r", DataType::F32, {SizeExpr::constant(1), sym("K")});
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<UnaryOp>(UnaryOpType::Neg, out, r);
  EXPECT_THAT(verify_error(f), HasSubstr("T3 = neg(...): output axis iS6{N} is not Broadcast but "
                                         "no operand iterates it"));
}

TEST_F(VerifierErrorTest, ElementwiseOutputWithReductionAxis) {
  IterDomain* n = f.make_iter_domain(sym("N"), IterType::Iteration);
  IterDomain* k = f.make_iter_domain(sym("K"), IterType::Reduction);
  TensorView* out = output(f.make_tensor(DataType::F32, std::vector<IterDomain*>{n, k}));
  f.create<UnaryOp>(UnaryOpType::Exp, out, a);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = exp(...): elementwise output has a Reduction axis"));
}

TEST_F(VerifierErrorTest, ReductionOutputWithoutReductionAxis) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<ReductionOp>(ReductionOpType::Sum, out, a);
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = reduction(...): reduction output has no Reduction axis"));
}

TEST_F(VerifierErrorTest, ReductionThatMakesABroadcastAxisIteration) {
  TensorView* r = input(f, "r", DataType::F32, {SizeExpr::constant(1), sym("K")});
  IterDomain* one = f.make_iter_domain(SizeExpr::constant(1), IterType::Iteration);
  IterDomain* k = f.make_iter_domain(sym("K"), IterType::Reduction);
  TensorView* out = output(f.make_tensor(DataType::F32, std::vector<IterDomain*>{one, k}));
  f.create<ReductionOp>(ReductionOpType::Max, out, r);
  EXPECT_THAT(verify_error(f),
              HasSubstr("T3 = reduction(...): axis 0 is Iteration but the operand's is Broadcast"));
}

TEST_F(VerifierErrorTest, ReductionChangesDtype) {
  IterDomain* n = f.make_iter_domain(sym("N"), IterType::Iteration);
  IterDomain* k = f.make_iter_domain(sym("K"), IterType::Reduction);
  TensorView* out = output(f.make_tensor(DataType::F64, std::vector<IterDomain*>{n, k}));
  f.create<ReductionOp>(ReductionOpType::Sum, out, a);
  EXPECT_THAT(verify_error(f), HasSubstr("dtype changes across a reduction, f32 to f64"));
}

TEST_F(VerifierErrorTest, BroadcastWhoseNewAxisIsIteration) {
  TensorView* v = input(f, "v", DataType::F32, {sym("N")});
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BroadcastOp>(out, v, std::vector<bool>{false, true});
  EXPECT_THAT(verify_error(f), HasSubstr("T3 = broadcast(...): new axis 1 is not Broadcast"));
}

TEST_F(VerifierErrorTest, BroadcastFlagCountDiffersFromRank) {
  TensorView* v = input(f, "v", DataType::F32, {sym("N")});
  TensorView* out = output(tensor(DataType::F32, {sym("N"), SizeExpr::constant(1)}));
  f.create<BroadcastOp>(out, v, std::vector<bool>{false, true, true});
  EXPECT_THAT(verify_error(f),
              HasSubstr("T3 = broadcast(...): 3 broadcast flags for an output of rank 2"));
}

TEST_F(VerifierErrorTest, BroadcastAxisWithExtentOtherThanOne) {
  IterDomain* n = f.make_iter_domain(sym("N"), IterType::Broadcast);
  TensorView* t = f.make_tensor(DataType::F32, {n});
  f.add_input(t);
  EXPECT_THAT(verify_error(f), HasSubstr("T2: Broadcast axis bS4{N} has extent other than 1"));
}

TEST_F(VerifierErrorTest, PermuteWithANonPermutation) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("N")}));
  f.create<PermuteOp>(out, a, std::vector<int>{0, 0});
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = permute(...): new2old {0, 0} is not a permutation of [0, 2)"));
}

TEST_F(VerifierErrorTest, PermuteWithWrongLength) {
  TensorView* out = output(tensor(DataType::F32, {sym("K"), sym("N")}));
  f.create<PermuteOp>(out, a, std::vector<int>{1, 0, 2});
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = permute(...): new2old {1, 0, 2} has 3 entries but "
                                         "operand T0 has rank 2"));
}

TEST_F(VerifierErrorTest, PermuteOutputNotPermuted) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<PermuteOp>(out, a, std::vector<int>{1, 0});
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = permute(...): axis 0 extent N does not match operand's K"));
}

TEST_F(VerifierErrorTest, OutputInLocalMemory) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, b);
  out->set_memory_type(MemoryType::Local);
  EXPECT_THAT(verify_error(f), HasSubstr("output T2 is not Global"));
}

TEST_F(VerifierErrorTest, InputInSharedMemory) {
  a->set_memory_type(MemoryType::Shared);
  EXPECT_THAT(verify_error(f), HasSubstr("input T0 is not Global"));
}

TEST_F(VerifierErrorTest, OutputNeverComputed) {
  output(tensor(DataType::F32, {sym("N")}));
  EXPECT_THAT(verify_error(f), HasSubstr("output T2 is never computed"));
}

TEST_F(VerifierErrorTest, TensorUsedButNeitherDefinedNorInput) {
  TensorView* orphan = tensor(DataType::F32, {sym("N"), sym("K")});
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, orphan);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 is used but neither defined nor a fusion input"));
}

TEST_F(VerifierErrorTest, FusionInputWithDefinition) {
  // add_input refuses a defined tensor, so define it afterwards.
  TensorView* x = input(f, "x", DataType::F32, {sym("N"), sym("K")});
  f.create<UnaryOp>(UnaryOpType::Neg, x, a);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = neg(...): fusion input T2 has a definition"));
}

TEST_F(VerifierErrorTest, ComparisonProducingF32) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Lt, out, a, b);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = lt(...): lt produces f32, expected bool"));
}

TEST_F(VerifierErrorTest, ArithmeticProducingBool) {
  TensorView* out = output(tensor(DataType::Bool, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Sub, out, a, b);
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = sub(...): sub produces bool, expected a numeric type"));
}

TEST_F(VerifierErrorTest, ArithmeticOnUncastOperand) {
  TensorView* i = input(f, "i", DataType::I32, {sym("N"), sym("K")});
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, i);
  EXPECT_THAT(verify_error(f), HasSubstr("T3 = add(...): operand T2 is i32, expected f32 (operands "
                                         "of math are cast to the result type)"));
}

TEST_F(VerifierErrorTest, UnaryOnUncastOperand) {
  TensorView* out = output(tensor(DataType::F64, {sym("N"), sym("K")}));
  f.create<UnaryOp>(UnaryOpType::Exp, out, a);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = exp(...): operand T0 is f32, expected f64"));
}

TEST_F(VerifierErrorTest, LogicalNotOnNumbers) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<UnaryOp>(UnaryOpType::Not, out, a);
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = logical_not(...): logical_not produces f32, expected bool"));
}

TEST_F(VerifierErrorTest, LogicalAndOnNumbers) {
  TensorView* out = output(tensor(DataType::Bool, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::And, out, a, b);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = logical_and(...): operand T0 is f32, expected bool "
                                         "(logical operators take bool)"));
}

TEST_F(VerifierErrorTest, WhereWithNonBoolCondition) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<WhereOp>(out, a, a, b);
  EXPECT_THAT(verify_error(f), HasSubstr("T2 = where(...): condition T0 is f32, expected bool"));
}

TEST_F(VerifierErrorTest, MathProducingHalf) {
  TensorView* out = output(tensor(DataType::F16, {sym("N"), sym("K")}));
  f.create<UnaryOp>(UnaryOpType::Abs, out, a);
  // The operand check comes first; either way the half result is named.
  EXPECT_THAT(verify_error(f), AllOf(HasSubstr("T2 = abs(...)"), HasSubstr("f16")));
}

TEST_F(VerifierErrorTest, CopyChangesDtype) {
  TensorView* out = output(tensor(DataType::BF16, {sym("N"), sym("K")}));
  f.create<LoadStoreOp>(LoadStoreOpType::Set, out, a);
  EXPECT_THAT(verify_error(f),
              HasSubstr("T2 = set(...): set changes dtype, f32 to bf16; a copy keeps it"));
}

TEST_F(VerifierErrorTest, IterDomainSharedByTwoTensors) {
  TensorView* alias = f.make_tensor(DataType::F32, a->logical());
  f.add_input(alias);
  EXPECT_THAT(verify_error(f), HasSubstr("iS0{N} is shared by T0 and T2"));
}

TEST_F(VerifierErrorTest, IterDomainTwiceInOneTensor) {
  IterDomain* n = f.make_iter_domain(sym("N"), IterType::Iteration);
  f.add_input(f.make_tensor(DataType::F32, std::vector<IterDomain*>{n, n}));
  EXPECT_THAT(verify_error(f), HasSubstr("T2: iS4{N} appears twice in its logical domain"));
}

TEST_F(VerifierErrorTest, ComputeAtPositionOutOfRange) {
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, b);
  a->set_compute_at_pos(3);
  EXPECT_THAT(verify_error(f), HasSubstr("T0: compute-at position 3 outside [0, 2]"));
}

TEST_F(VerifierErrorTest, NegativeComputeAtPosition) {
  b->set_compute_at_pos(-1);
  EXPECT_THAT(verify_error(f), HasSubstr("T1: compute-at position -1 outside [0, 2]"));
}

TEST_F(VerifierErrorTest, CycleReachableFromAnOutput) {
  TensorView* p = tensor(DataType::F32, {sym("N"), sym("K")});
  TensorView* q = tensor(DataType::F32, {sym("N"), sym("K")});
  f.create<UnaryOp>(UnaryOpType::Neg, p, q);
  f.create<UnaryOp>(UnaryOpType::Neg, q, p);
  output(p);
  EXPECT_THAT(verify_error(f), HasSubstr("cycle in the expression graph"));
}

TEST_F(VerifierErrorTest, CycleThatNoOutputReaches) {
  TensorView* p = tensor(DataType::F32, {sym("N"), sym("K")});
  TensorView* q = tensor(DataType::F32, {sym("N"), sym("K")});
  f.create<UnaryOp>(UnaryOpType::Neg, p, q);
  f.create<UnaryOp>(UnaryOpType::Neg, q, p);
  TensorView* out = output(tensor(DataType::F32, {sym("N"), sym("K")}));
  f.create<BinaryOp>(BinaryOpType::Add, out, a, b);
  EXPECT_THAT(verify_error(f),
              HasSubstr("cycle in the expression graph: T3 = neg(...) reads T2, which depends "
                        "on T3"));
}

}  // namespace
}  // namespace schedlab::ir
